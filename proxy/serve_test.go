package proxy

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// servePage is the body of servedCopy: long and compressible enough for
// gzip and brotli copies.
var servePage = bytes.Repeat([]byte("<p>served from the cache</p>\n"), 20)

const serveLastModified = "Tue, 01 Dec 2026 10:00:00 GMT"

// servedCopy is a page stored by store at clock's now, as the origin sent
// it with a strong ETag, a Last-Modified, Age 5 and an internal tag
// field; debug sets the site's DebugHeaders.
func servedCopy(t *testing.T, clock *testClock, debug bool) (*site, *cache.Entry) {
	t.Helper()
	p := storeProxy(t, clock, func(c *Config) { c.Default.DebugHeaders = debug })
	f := storing(t, p, clock, "/served", nil, nil, 200, []string{"Cache-Control: max-age=600", "Content-Type: text/html",
		`ETag: "p1"`, "Last-Modified: " + serveLastModified, "Age: 5", "X-LiteSpeed-Tag: page"}, servePage)
	res := f.store()
	if !res.stored || res.entry.Gzip == nil || res.entry.Brotli == nil {
		t.Fatalf("the page was not stored with its compressed copies: %q", res.status)
	}
	return f.s, res.entry
}

// serveTo writes e to a GET with the header lines, at now.
func serveTo(s *site, e *cache.Entry, now int64, lines ...string) *fasthttp.Response {
	ctx := requestCtx(http.MethodGet, fillHost, "/served", false)
	for _, l := range lines {
		k, v, _ := strings.Cut(l, ":")
		ctx.Request.Header.Add(k, strings.TrimSpace(v))
	}
	serveEntry(ctx, s, e, now, csHit)
	return &ctx.Response
}

// respField is the value of resp's field name, in any case: serve sets
// some with SetCanonical, which Peek's normalising does not find.
func respField(resp *fasthttp.Response, name string) string {
	for k, v := range resp.Header.All() {
		if strings.EqualFold(string(k), name) {
			return string(v)
		}
	}
	return ""
}

// A hit is sent in the coding the client accepts best (br, then gzip,
// then none), with the validator of the bytes it gets: a compressed
// body's ETag is weak.
func TestServePicksTheCodingTheClientAccepts(t *testing.T) {
	clock := newTestClock()
	s, e := servedCopy(t, clock, false)
	tests := []struct {
		accept, coding, etag string
	}{
		{"", "", `"p1"`},
		{"gzip, deflate, br", "br", `W/"p1"`},
		{"gzip", "gzip", `W/"p1"`},
		{"br;q=0, gzip", "gzip", `W/"p1"`},
		{"gzip;q=0.0, br;q=0", "", `"p1"`},
		{"*", "br", `W/"p1"`},
		{"identity", "", `"p1"`},
	}
	for _, tt := range tests {
		t.Run("Accept-Encoding "+tt.accept, func(t *testing.T) {
			var lines []string
			if tt.accept != "" {
				lines = append(lines, "Accept-Encoding: "+tt.accept)
			}
			resp := serveTo(s, e, clock.Now(), lines...)
			want := map[string][]byte{"": e.Body, "gzip": e.Gzip, "br": e.Brotli}[tt.coding]
			if got := respField(resp, "Content-Encoding"); got != tt.coding || !bytes.Equal(resp.Body(), want) {
				t.Errorf("Content-Encoding %q with %d bytes, want %q with %d", got, len(resp.Body()), tt.coding, len(want))
			}
			if got := respField(resp, "ETag"); got != tt.etag {
				t.Errorf("ETag %s, want %s", got, tt.etag)
			}
		})
	}
}

// A conditional GET the stored copy satisfies gets a 304 without a body:
// If-None-Match compared weakly, If-Modified-Since against Last-Modified,
// and If-None-Match deciding when both are sent (RFC 9110 13.2.2).
func TestServeAnswersConditionalRequestsThatMatchWith304(t *testing.T) {
	clock := newTestClock()
	s, e := servedCopy(t, clock, false)
	tests := []struct {
		name  string
		lines []string
		want  int
	}{
		{"matching If-None-Match", []string{`If-None-Match: "p1"`}, 304},
		{"If-None-Match of the weak gzip validator", []string{`If-None-Match: W/"p1"`}, 304},
		{"If-None-Match of the identity validator from a gzip client", []string{`If-None-Match: "p1"`, "Accept-Encoding: gzip"}, 304},
		{"If-None-Match in a list", []string{`If-None-Match: "x", "p1"`}, 304},
		{"If-None-Match *", []string{`If-None-Match: *`}, 304},
		{"other If-None-Match", []string{`If-None-Match: "p2"`}, 200},
		{"If-Modified-Since the Last-Modified", []string{"If-Modified-Since: " + serveLastModified}, 304},
		{"If-Modified-Since later", []string{"If-Modified-Since: Wed, 02 Dec 2026 10:00:00 GMT"}, 304},
		{"If-Modified-Since earlier", []string{"If-Modified-Since: Mon, 30 Nov 2026 10:00:00 GMT"}, 200},
		{"If-None-Match decides over If-Modified-Since", []string{`If-None-Match: "p2"`, "If-Modified-Since: " + serveLastModified}, 200},
		{"unconditional", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := serveTo(s, e, clock.Now(), tt.lines...)
			if resp.StatusCode() != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode(), tt.want)
			}
			if tt.want == 304 && len(resp.Body()) > 0 {
				t.Errorf("a 304 with %d bytes of body", len(resp.Body()))
			}
			if tt.want == 200 && !bytes.Equal(resp.Body(), servePage) {
				t.Errorf("a 200 with %d bytes, want the page's %d", len(resp.Body()), len(servePage))
			}
		})
	}
}

// A hit's Age is the origin's Age plus the seconds it has been stored.
func TestServeCountsAgeFromTheOriginsAge(t *testing.T) {
	clock := newTestClock()
	s, e := servedCopy(t, clock, false)
	for _, tt := range []struct {
		after time.Duration
		age   string
	}{{0, "5"}, {999 * time.Millisecond, "5"}, {time.Second, "6"}, {90 * time.Second, "95"}} {
		if got := respField(serveTo(s, e, clock.Now()+int64(tt.after)), "Age"); got != tt.age {
			t.Errorf("Age %s after %v, want %s", got, tt.after, tt.age)
		}
	}
}

// A range of a stored copy is cut from it: 206 with its Content-Range, or
// 416 when it cannot be satisfied; an If-Range that no longer names the
// copy gets the whole page.
func TestServeAnswersRangesFromTheStoredCopy(t *testing.T) {
	clock := newTestClock()
	s, e := servedCopy(t, clock, false)
	size := len(servePage)
	tests := []struct {
		name         string
		lines        []string
		status       int
		body         []byte
		contentRange string
	}{
		{"first bytes", []string{"Range: bytes=0-3"}, 206, servePage[:4], "bytes 0-3/580"},
		{"last bytes", []string{"Range: bytes=-5"}, 206, servePage[size-5:], "bytes 575-579/580"},
		{"past the end", []string{"Range: bytes=1000-"}, 416, nil, "bytes */580"},
		{"If-Range of the copy", []string{"Range: bytes=0-3", `If-Range: "p1"`}, 206, servePage[:4], "bytes 0-3/580"},
		{"If-Range of another", []string{"Range: bytes=0-3", `If-Range: "old"`}, 200, servePage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := serveTo(s, e, clock.Now(), tt.lines...)
			if resp.StatusCode() != tt.status || !bytes.Equal(resp.Body(), tt.body) {
				t.Errorf("%d with %q, want %d with %q", resp.StatusCode(), resp.Body(), tt.status, tt.body)
			}
			if got := respField(resp, "Content-Range"); got != tt.contentRange {
				t.Errorf("Content-Range %q, want %q", got, tt.contentRange)
			}
		})
	}
}

// The application's internal cache fields (its tags) reach clients only
// from a site that asks for debug headers.
func TestServeShowsInternalFieldsOnlyWithDebugHeaders(t *testing.T) {
	for _, debug := range []bool{false, true} {
		clock := newTestClock()
		s, e := servedCopy(t, clock, debug)
		resp := serveTo(s, e, clock.Now())
		if got := respField(resp, "X-LiteSpeed-Tag") != ""; got != debug {
			t.Errorf("debug headers %v: tag field shown %v", debug, got)
		}
		if cs := respField(resp, "Cache-Status"); cs != string(csHit) {
			t.Errorf("Cache-Status %q, want %q", cs, csHit)
		}
	}
}
