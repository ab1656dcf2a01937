package main_test

// End-to-end tests of what an idle HTTP/2 connection over TLS holds
// (issue 33: 10,000 of them at no more than nginx's RSS, the peak of the
// burst that opens them included).

import (
	"bytes"
	"crypto/tls"
	"strconv"
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
	c := openH2(t, rj) // preface and SETTINGS sent, the server's SETTINGS read
	h := &h2Client{c: c, fr: http2.NewFramer(c, c), next: 1, dec: hpack.NewDecoder(4096, nil)}
	h.enc = hpack.NewEncoder(&h.hb)
	if err := h.fr.WriteSettingsAck(); err != nil {
		t.Fatal(err)
	}
	return h
}

// get asks for path on a new stream and returns the status, the body and
// the response's header block as sent (HPACK-encoded).
func (h *h2Client) get(t *testing.T, path string) (status string, body, block []byte) {
	t.Helper()
	h.hb.Reset()
	for _, f := range []hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: path}} {
		_ = h.enc.WriteField(f) // to memory
	}
	id := h.next
	h.next += 2
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.hb.Bytes(), EndHeaders: true, EndStream: true}); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	_ = h.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	defer h.c.SetReadDeadline(time.Time{})
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		if f.Header().StreamID != id {
			continue // SETTINGS ack, WINDOW_UPDATE
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			block = append(block, f.HeaderBlockFragment()...)
			fields, err := h.dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				t.Fatalf("GET %s: header block: %v", path, err)
			}
			for _, hf := range fields {
				if hf.Name == ":status" {
					status = hf.Value
				}
			}
		case *http2.DataFrame:
			body = append(body, f.Data()...)
		case *http2.RSTStreamFrame:
			t.Fatalf("GET %s: stream reset (%v)", path, f.ErrCode)
		}
		if f.Header().Flags.Has(http2.FlagHeadersEndStream) {
			return status, body, block
		}
	}
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
	// take the few scrapes since.
	burst := func() float64 {
		forced := metric("go_gc_forced_count")
		for range n {
			c := dialH2(t, rj)
			if status, body, _ := c.get(t, "/h2peak"); status != "200" || string(body) != "page /h2peak" {
				t.Fatalf("client %d asked for /h2peak: %s %q", len(clients), status, body)
			}
			clients = append(clients, c)
		}
		if !testbed.Poll(20*time.Second, func() bool { return metric("go_gc_forced_count") >= forced+2 }) {
			t.Fatalf("no release after %d HTTP/2 connections went idle", len(clients))
		}
		return metric("go_memstats_heap_alloc_bytes")
	}
	first := burst()
	perConn := (burst() - first) / n // the second n's, on one cached page for all
	t.Logf("%.0f bytes of heap per idle TLS + HTTP/2 connection", perConn)
	if perConn > 7<<10 {
		t.Errorf("%.0f bytes of heap per idle TLS + HTTP/2 connection, want 7 KiB at most", perConn)
	}
	for i, c := range clients {
		c.askOwn(t, i)
	}
}
