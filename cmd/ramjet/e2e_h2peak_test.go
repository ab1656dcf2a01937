package main_test

// End-to-end tests of what an idle HTTP/2 connection over TLS holds
// (issue 33: 10,000 of them at no more than nginx's RSS, the peak of the
// burst that opens them included).

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// h2Client is one HTTP/2 connection over TLS that asks for pages one at
// a time, as a browser tab that went quiet.
type h2Client struct {
	c    *tls.Conn
	fr   *http2.Framer
	enc  *hpack.Encoder
	dec  *hpack.Decoder
	hb   bytes.Buffer
	next uint32 // the next stream id
}

func dialH2(t *testing.T, rj *tlsRamjet) *h2Client {
	t.Helper()
	h, err := tryDialH2(rj)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.c.Close() })
	return h
}

// tryDialH2 is dialH2 for any goroutine: the caller closes h.c.
func tryDialH2(rj *tlsRamjet) (*h2Client, error) {
	c, err := tryOpenH2(rj) // preface and SETTINGS sent, the server's SETTINGS read
	if err != nil {
		return nil, err
	}
	h := &h2Client{c: c, fr: http2.NewFramer(c, c), next: 1, dec: hpack.NewDecoder(4096, nil)}
	h.enc = hpack.NewEncoder(&h.hb)
	if err := h.fr.WriteSettingsAck(); err != nil {
		c.Close()
		return nil, err
	}
	return h, nil
}

// get asks for path on a new stream and returns the status, the body and
// the response's header block as sent (HPACK-encoded).
func (h *h2Client) get(t *testing.T, path string) (status string, body, block []byte) {
	t.Helper()
	status, body, block, err := h.fetch(path)
	if err != nil {
		t.Fatal(err)
	}
	return status, body, block
}

// fetch is get for any goroutine.
func (h *h2Client) fetch(path string) (status string, body, block []byte, err error) {
	h.hb.Reset()
	for _, f := range []hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: path}} {
		_ = h.enc.WriteField(f) // to memory
	}
	id := h.next
	h.next += 2
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.hb.Bytes(), EndHeaders: true, EndStream: true}); err != nil {
		return "", nil, nil, fmt.Errorf("GET %s: %w", path, err)
	}
	_ = h.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	defer h.c.SetReadDeadline(time.Time{})
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			return "", nil, nil, fmt.Errorf("GET %s: %w", path, err)
		}
		if f.Header().StreamID != id {
			continue // SETTINGS ack, WINDOW_UPDATE
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			block = append(block, f.HeaderBlockFragment()...)
			fields, err := h.dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				return "", nil, nil, fmt.Errorf("GET %s: header block: %w", path, err)
			}
			for _, hf := range fields {
				if hf.Name == ":status" {
					status = hf.Value
				}
			}
		case *http2.DataFrame:
			body = append(body, f.Data()...)
		case *http2.RSTStreamFrame:
			return "", nil, nil, fmt.Errorf("GET %s: stream reset (%v)", path, f.ErrCode)
		}
		if f.Header().Flags.Has(http2.FlagHeadersEndStream) {
			return status, body, block, nil
		}
	}
}

// dialIdle opens n HTTP/2 connections that each got path and went idle,
// a few at a time, as browsers do on a busy site: fast enough that the
// burst ends before conns' release looks (a second without 256 more idle
// connections) even on a loaded machine.
func dialIdle(rj *tlsRamjet, n int, path string) ([]*h2Client, error) {
	const dialers = 8
	out := make([]*h2Client, n)
	errs := make(chan error, dialers)
	var next atomic.Int64
	for range dialers {
		go func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				h, err := tryDialH2(rj)
				if err == nil {
					out[i] = h
					var status string
					var body []byte
					status, body, _, err = h.fetch(path)
					if err == nil && (status != "200" || string(body) != "page "+path) {
						err = fmt.Errorf("connection %d asked for %s: %s %q", i, path, status, body)
					}
				}
				if err != nil {
					next.Store(int64(n)) // the others stop too
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var err error
	for range dialers {
		err = errors.Join(err, <-errs)
	}
	return out, err
}

// askOwn gets client i's own page and fails unless it came back.
func (h *h2Client) askOwn(t *testing.T, i int) {
	t.Helper()
	path := "/h2peak/" + strconv.Itoa(i)
	if status, body, _ := h.get(t, path); status != "200" || string(body) != "page "+path {
		t.Fatalf("client %d asked for %s: %s %q", i, path, status, body)
	}
}

// TestIdleTLSHTTP2ConnectionsKeepNeitherHandshakeBuffersNorHeaderTables:
// an HTTP/2 connection over TLS that answered its request and went idle
// holds under 7 KiB of Go heap (5.6). Before, 11.5: crypto/tls kept the
// record and handshake buffers the ClientHello had grown (about 4 KiB),
// and the HPACK encoder its table of the response fields with the maps
// that interned their strings, and its output buffer; at 10,000 idle
// connections that was 126 MB live, and a burst that opens them peaked
// at twice what is live. Every connection still answers its own client
// afterwards, on the same connection.
func TestIdleTLSHTTP2ConnectionsKeepNeitherHandshakeBuffersNorHeaderTables(t *testing.T) {
	origin := cachedOrigin(t)
	rj := startTLSRamjet(t, newPKI(t), origin.URL)
	metric := func(name string) float64 { return metricValue(t, rj.AdminURL, name) }
	const n = 1100 // past conns.releaseStep (1,024): the release collects garbage twice
	var clients []*h2Client
	// burst opens n more idle connections and returns the heap once the
	// release after them collected the garbage: what is live, give or
	// take the few scrapes since. A release that came before the burst's
	// end (a stall longer than conns' look) left the garbage of the
	// connections after it: that burst is followed by another.
	burst := func() float64 {
		for range 3 {
			forced := metric("go_gc_forced_count")
			more, err := dialIdle(rj, n, "/h2peak")
			for _, c := range more {
				if c != nil {
					t.Cleanup(func() { c.c.Close() })
					clients = append(clients, c)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if metric("go_gc_forced_count") != forced {
				t.Logf("a release came before the burst of %d connections ended; one more burst", n)
				continue
			}
			if !testbed.Poll(20*time.Second, func() bool { return metric("go_gc_forced_count") >= forced+2 }) {
				t.Fatalf("no release after %d HTTP/2 connections went idle", len(clients))
			}
			return metric("go_memstats_heap_alloc_bytes")
		}
		t.Fatalf("a release came before the end of 3 bursts of %d connections", n)
		return 0
	}
	first, before := burst(), len(clients)
	perConn := (burst() - first) / float64(len(clients)-before) // the last burst's, on one cached page for all
	t.Logf("%.0f bytes of heap per idle TLS + HTTP/2 connection", perConn)
	if perConn > 7<<10 {
		t.Errorf("%.0f bytes of heap per idle TLS + HTTP/2 connection, want 7 KiB at most", perConn)
	}
	for i, c := range clients {
		c.askOwn(t, i)
	}
}
