package main_test

// End-to-end tests of the connection limits on the TLS and h2c listeners
// (issue 19): the limits and timeouts of the plain listener apply to
// HTTPS, HTTP/2 and h2c alike.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// connsConfig: header_timeout far below idle_timeout and read_timeout,
// so that a connection cut within seconds was cut by header_timeout.
const connsConfig = "server:\n  header_timeout: 500ms\n  read_timeout: 60s\n  idle_timeout: 60s\n  max_conns_per_ip: 4\n"

// cachedOrigin answers every path with "page PATH", cacheable for 10
// minutes: a client that gets its own page got no other connection's
// answer.
func cachedOrigin(t *testing.T) *httptest.Server {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=600")
		io.WriteString(w, "page "+r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	return origin
}

// openH2 opens an HTTP/2 connection over TLS and leaves it idle once the
// server's SETTINGS are in: a browser's preconnected connection.
func openH2(t *testing.T, rj *tlsRamjet) *tls.Conn {
	t.Helper()
	c, err := tryOpenH2(rj)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// tryOpenH2 is openH2 for any goroutine: the caller closes the
// connection.
func tryOpenH2(rj *tlsRamjet) (*tls.Conn, error) {
	c, err := tls.Dial("tcp", rj.TLSAddr, &tls.Config{RootCAs: rj.pki.ca.Pool(), ServerName: "localhost",
		NextProtos: []string{"h2"}})
	if err != nil {
		return nil, err
	}
	if err := preface(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// preface sends the client's preface and SETTINGS and reads the server's
// SETTINGS.
func preface(c *tls.Conn) error {
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		return fmt.Errorf("negotiated %q, want h2", p)
	}
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		return err
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := fr.ReadFrame()
	if err != nil {
		return err
	}
	if _, ok := f.(*http2.SettingsFrame); !ok {
		return fmt.Errorf("first frame %T, want SETTINGS", f)
	}
	return nil
}

// closedWithin reads c until the server closes it and says how long that
// took; it fails the test if the server keeps it open for 10 s.
func closedWithin(t *testing.T, c net.Conn) time.Duration {
	t.Helper()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for 10 s")
	}
	return time.Since(start)
}

// TestTLSLimitsIdleH2ConnectionsPerClientAddress: idle HTTP/2
// connections stay open past header_timeout and count, with HTTP/1.1
// ones, against max_conns_per_ip on the TLS listener; the one over is
// closed before its handshake and counted; a closed one's place is given
// back.
func TestTLSLimitsIdleH2ConnectionsPerClientAddress(t *testing.T) {
	p := newPKI(t)
	rj := startTLSRamjet(t, p, cachedOrigin(t).URL, "--config", testbed.WriteConfig(t, "", connsConfig))
	open := make([]*tls.Conn, 3)
	for i := range open {
		open[i] = openH2(t, rj)
	}
	// A silent fourth, opened after them, is cut at header_timeout: by
	// then the HTTP/2 ones have been idle longer, and are idle_timeout's.
	silent, err := net.Dial("tcp", rj.TLSAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if d := closedWithin(t, silent); d > 5*time.Second {
		t.Fatalf("silent connection cut after %v, want about header_timeout", d)
	}
	for i, c := range open {
		if err := readAway(c); !isTimeout(err) {
			t.Fatalf("idle h2 connection %d after header_timeout: %v, want it open", i, err)
		}
	}
	// The silent one's place is given back once the server closed it,
	// which may be just after the client saw the close.
	gauge := `ramjet_client_connections{listener="tls"}`
	if !testbed.Poll(5*time.Second, func() bool { return metricValue(t, rj.AdminURL, gauge) == 3 }) {
		t.Fatalf("%s = %v, want 3", gauge, metricValue(t, rj.AdminURL, gauge))
	}
	h1 := rj.client(t, "h1")                                                                // the fourth again: an HTTP/1.1 keep-alive one
	mustStatus(t, get(t, h1, rj.HTTPS("localhost", "/p")), 200, "HTTP/1.1 under the limit") // one connection: the body is read
	if !testbed.Poll(5*time.Second, func() bool { return metricValue(t, rj.AdminURL, gauge) == 4 }) {
		t.Fatalf("%s = %v, want 4", gauge, metricValue(t, rj.AdminURL, gauge))
	}

	over, err := tls.Dial("tcp", rj.TLSAddr, &tls.Config{RootCAs: p.ca.Pool(), ServerName: "localhost", NextProtos: []string{"h2"}})
	if err == nil {
		over.Close()
		t.Fatal("the connection over max_conns_per_ip completed its handshake")
	}
	refused := `ramjet_client_connections_refused_total{listener="tls",reason="per_ip"}`
	if v := metricValue(t, rj.AdminURL, refused); v != 1 {
		t.Errorf("%s = %v, want 1", refused, v)
	}

	open[0].Close()
	if !testbed.Poll(5*time.Second, func() bool { return metricValue(t, rj.AdminURL, gauge) == 3 }) {
		t.Fatalf("%s = %v after a client left, want 3", gauge, metricValue(t, rj.AdminURL, gauge))
	}
	openH2(t, rj) // its place is free again
}

// readAway reads what the server sent (its SETTINGS acknowledgement and
// window updates) until a read finds nothing for 50 ms, and returns that
// read's error: a timeout for an open connection.
func readAway(c net.Conn) error {
	buf := make([]byte, 4096)
	for range 100 {
		_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := c.Read(buf); err != nil {
			return err
		}
	}
	return errors.New("the server kept sending")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestTLSSlowClientsCutAtHeaderTimeout: over TLS, a client that stalls
// in its handshake and one that completes it and then trickles a
// request header are both cut at server.header_timeout, though
// read_timeout and idle_timeout are a minute.
func TestTLSSlowClientsCutAtHeaderTimeout(t *testing.T) {
	p := newPKI(t)
	rj := startTLSRamjet(t, p, cachedOrigin(t).URL, "--config", testbed.WriteConfig(t, "", connsConfig))

	stalled, err := net.Dial("tcp", rj.TLSAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	stalled.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00}) // a ClientHello record's header, and never its body
	if d := closedWithin(t, stalled); d > 5*time.Second {
		t.Errorf("stalled handshake cut after %v, want about header_timeout", d)
	}

	slow, err := tls.Dial("tcp", rj.TLSAddr, &tls.Config{RootCAs: p.ca.Pool(), ServerName: "localhost",
		NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	start := time.Now()
	for _, part := range []string{"GET /p HTTP/1.1\r\n", "Host: localhost\r\n"} { // and never the end
		if _, err := io.WriteString(slow, part); err != nil {
			t.Fatal(err)
		}
	}
	closedWithin(t, slow)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("slow TLS client cut after %v, want about header_timeout", d)
	}

	// Both places are given back.
	gauge := `ramjet_client_connections{listener="tls"}`
	if !testbed.Poll(5*time.Second, func() bool { return metricValue(t, rj.AdminURL, gauge) == 0 }) {
		t.Fatalf("%s = %v after the slow clients were cut, want 0", gauge, metricValue(t, rj.AdminURL, gauge))
	}
	mustStatus(t, protoGet(t, rj.client(t, "h2"), 2, rj.HTTPS("localhost", "/p")), 200, "a prompt client")
}

// TestH2CListenerLimitsPerClientAddress: the h2c listener counts its
// connections, HTTP/2 with prior knowledge and HTTP/1.1 alike, against
// max_conns_per_ip and answers the one over with 429.
func TestH2CListenerLimitsPerClientAddress(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	cfg := testbed.WriteConfig(t, "", connsConfig)
	rj := startRamjet(t, cachedOrigin(t).URL, "--config", cfg, "--h2c-listen", addr)
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, http2.ClientPreface)
		http2.NewFramer(c, c).WriteSettings()
	}
	mustRefuseOverPerIP(t, rj, addr, "h2c") // two HTTP/1.1 under the limit, one over
}

// TestH2CListenerParksIdleHTTP1Connections: a TLS terminator's pooled
// HTTP/1.1 connections to the h2c listener wait parked when idle, as the
// main listener's do, and their next request is a hit; a client
// trickling a header there is still cut off at header_timeout.
func TestH2CListenerParksIdleHTTP1Connections(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	cfg := testbed.WriteConfig(t, "", connsConfig)
	rj := startRamjet(t, cachedOrigin(t).URL, "--config", cfg, "--h2c-listen", addr)
	parkThenHit(t, rj, addr, "h2c", 3)
	cutOffAtHeaderTimeout(t, addr)
}
