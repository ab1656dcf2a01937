package main_test

import (
	"net/http"
	"testing"
	"time"
)

// RFC 9111 4: a reused response goes out with its stored header fields,
// Date among them, and an Age; RFC 9110 6.6.1: exactly one Date. Over
// plain HTTP/1.1, HTTP/1.1 over TLS and HTTP/2 (whose hits are answered
// inline, on the connection's goroutine), a hit carries the origin's Date
// and an answer ramjet does not keep the current time.
func TestHitsCarryTheStoredDateOnEveryProtocol(t *testing.T) {
	t.Parallel()
	o := startFreshOrigin(t)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	o.set("/dated", freshAnswer{header: []string{"Date: " + past, "Cache-Control: max-age=600"}})
	o.set("/pass", freshAnswer{header: []string{"Date: " + past, "Cache-Control: no-store"}})
	rj := startTLSRamjet(t, newPKI(t), o.URL)
	clients := []struct {
		name  string
		c     *http.Client
		url   func(path string) string
		major int
	}{
		{name: "HTTP/1.1", c: newClient(t), url: func(p string) string { return rj.URL + p }, major: 1},
		{name: "HTTP/1.1 over TLS", c: rj.client(t, "h1"), url: func(p string) string { return rj.HTTPS("localhost", p) }, major: 1},
		{name: "HTTP/2", c: rj.client(t, "h2"), url: func(p string) string { return rj.HTTPS("localhost", p) }, major: 2},
	}
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			get(t, cl.c, cl.url("/dated"))
			for _, what := range []string{"a hit", "another hit"} {
				r := protoGet(t, cl.c, cl.major, cl.url("/dated"))
				mustFreshHit(t, r, what)
				if d := r.Header.Values("Date"); len(d) != 1 || d[0] != past {
					t.Fatalf("%s: Date %q, want exactly the stored %q", what, d, past)
				}
			}
			r := protoGet(t, cl.c, cl.major, cl.url("/pass"))
			d := r.Header.Values("Date")
			if len(d) != 1 {
				t.Fatalf("an answer not stored: Date %q, want exactly one", d)
			}
			if at, err := http.ParseTime(d[0]); err != nil || time.Since(at).Abs() > 10*time.Second {
				t.Fatalf("an answer not stored: Date %q, want the current time", d[0])
			}
		})
	}
}
