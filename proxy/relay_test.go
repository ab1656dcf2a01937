package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// originAnswer is an upstream response of status with the header lines
// and body; stream: the body comes as a stream of unknown length, as
// the origin pool's do when the origin does not say it.
func originAnswer(status int, lines []string, body string, stream bool) *fasthttp.Response {
	resp := fasthttp.AcquireResponse()
	resp.SetStatusCode(status)
	for _, l := range lines {
		k, v, _ := strings.Cut(l, ":")
		resp.Header.Add(k, strings.TrimSpace(v))
	}
	if stream {
		resp.SetBodyStream(strings.NewReader(body), -1)
	} else {
		resp.SetBody([]byte(body))
	}
	return resp
}

// relayed is what a client's method with the header lines gets when
// streamResponse relays resp (of which prefix was already read) for the
// site of p.
func relayed(t *testing.T, p *Proxy, method string, resp *fasthttp.Response, prefix string, lines ...string) *fasthttp.Response {
	t.Helper()
	ctx := requestCtx(method, fillHost, "/relayed", false)
	for _, l := range lines {
		k, v, _ := strings.Cut(l, ":")
		ctx.Request.Header.Add(k, strings.TrimSpace(v))
	}
	s := p.gen.Load().router.route([]byte(fillHost))
	var pre []byte
	if prefix != "" {
		pre = []byte(prefix)
	}
	streamResponse(ctx, s, resp, pre, []byte("ramjet; fwd=miss; detail=no-store"))
	return &ctx.Response
}

// A relayed answer keeps the origin's status and end-to-end fields; the
// connection's own fields (those Connection names too) and the
// application's internal cache fields stay behind, and Cache-Status is
// ramjet's.
func TestRelayPassesOnlyEndToEndFields(t *testing.T) {
	p := storeProxy(t, newTestClock(), nil)
	resp := originAnswer(http.StatusNotFound, []string{"Connection: X-Hop", "X-Hop: 1", "Keep-Alive: timeout=5",
		"X-LiteSpeed-Tag: secret-tag", "Cache-Status: origin-cache; hit", "X-Kept: yes", "Set-Cookie: s=1"}, "gone", false)
	out := relayed(t, p, http.MethodGet, resp, "")
	if out.StatusCode() != http.StatusNotFound || string(out.Body()) != "gone" {
		t.Fatalf("relayed %d %q, want the origin's 404", out.StatusCode(), out.Body())
	}
	for _, name := range []string{"X-Hop", "Keep-Alive", "X-LiteSpeed-Tag"} {
		if v := respField(out, name); v != "" {
			t.Errorf("relayed %s: %s", name, v)
		}
	}
	for name, want := range map[string]string{"X-Kept": "yes", "Set-Cookie": "s=1", "Cache-Status": "ramjet; fwd=miss; detail=no-store"} {
		if v := respField(out, name); v != want {
			t.Errorf("%s %q, want %q", name, v, want)
		}
	}
}

// The body is relayed whole: the bytes a fill already read of it
// (prefix) first, then the rest of the stream; a range is cut from both.
// A HEAD gets the length the GET would have had, when it is known.
func TestRelayStreamsTheBodyWithWhatWasAlreadyRead(t *testing.T) {
	tests := []struct {
		name, method string
		body, prefix string // prefix: read of the stream before; body: the rest
		stream       bool   // body is a stream of unknown length
		length       int    // body is a stream of this length, prefix included
		lines        []string
		status       int
		want         string
		contentRange string
		// contentLength is on a HEAD's answer.
		contentLength string
	}{
		{name: "whole", method: "GET", body: "0123456789", status: 200, want: "0123456789"},
		{name: "stream after its read prefix", method: "GET", prefix: "01234", body: "56789", stream: true, status: 200, want: "0123456789"},
		{name: "range across the prefix", method: "GET", prefix: "01234", body: "56789", length: 10,
			lines: []string{"Range: bytes=3-6"}, status: 206, want: "3456", contentRange: "bytes 3-6/10"},
		{name: "suffix range after the prefix", method: "GET", prefix: "01234", body: "56789", length: 10,
			lines: []string{"Range: bytes=-2"}, status: 206, want: "89", contentRange: "bytes 8-9/10"},
		{name: "no range of a stream of unknown length", method: "GET", prefix: "01234", body: "56789", stream: true,
			lines: []string{"Range: bytes=-2"}, status: 200, want: "0123456789"},
		{name: "range of a whole body", method: "GET", body: "0123456789", lines: []string{"Range: bytes=-2"}, status: 206, want: "89",
			contentRange: "bytes 8-9/10"},
		{name: "HEAD of a whole body", method: "HEAD", body: "0123456789", status: 200, contentLength: "10"},
		{name: "HEAD of a stream of unknown length", method: "HEAD", body: "0123456789", stream: true, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := storeProxy(t, newTestClock(), nil)
			resp := originAnswer(200, nil, tt.body, tt.stream)
			if tt.length > 0 {
				resp.SetBodyStream(strings.NewReader(tt.body), tt.length)
			}
			out := relayed(t, p, tt.method, resp, tt.prefix, tt.lines...)
			if out.StatusCode() != tt.status || string(out.Body()) != tt.want {
				t.Errorf("%d %q, want %d %q", out.StatusCode(), out.Body(), tt.status, tt.want)
			}
			if got := respField(out, "Content-Range"); got != tt.contentRange {
				t.Errorf("Content-Range %q, want %q", got, tt.contentRange)
			}
			if tt.method == "HEAD" {
				if got := respField(out, "Content-Length"); got != tt.contentLength {
					t.Errorf("HEAD Content-Length %q, want %q", got, tt.contentLength)
				}
			}
		})
	}
}

// An ESI page the cache does not keep is assembled all the same, so the
// client never sees markup; one in a coding ramjet cannot undo goes as it
// came only to a client that reads that coding, any other gets 502.
func TestRelayAssemblesESIPagesItDoesNotStore(t *testing.T) {
	const page = "<p>a</p><esi:remove>hidden</esi:remove><p>b</p>"
	gzipped := string(fasthttp.AppendGzipBytes(nil, []byte(page)))
	tests := []struct {
		name, coding, body, accept string
		status                     int
		want, wantCoding           string
	}{
		{name: "identity", body: page, status: 200, want: "<p>a</p><p>b</p>"},
		{name: "gzip is undone first", coding: "gzip", body: gzipped, status: 200, want: "<p>a</p><p>b</p>"},
		{name: "unknown coding to a client that reads it", coding: "x-squash", body: "squashed", accept: "x-squash",
			status: 200, want: "squashed", wantCoding: "x-squash"},
		{name: "unknown coding to a client that does not", coding: "x-squash", body: "squashed", status: http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(unreachable(t))
			cfg.Default.ESI = true
			p := newTestProxy(t, cfg, nil)
			var lines []string
			if tt.accept != "" {
				lines = append(lines, "Accept-Encoding: "+tt.accept)
			}
			r := beforeLookup(t, p, "/esi", lines...)
			respLines := []string{"X-LiteSpeed-Cache-Control: no-cache, esi=on", "Content-Type: text/html", "Age: 7", "Set-Cookie: s=1"}
			if tt.coding != "" {
				respLines = append(respLines, "Content-Encoding: "+tt.coding)
			}
			r.relay(originAnswer(200, respLines, tt.body, true), nil, []byte("ramjet; fwd=miss; detail=no-cache"))
			out := &r.ctx.Response
			if out.StatusCode() != tt.status {
				t.Fatalf("status %d, want %d", out.StatusCode(), tt.status)
			}
			if tt.status != 200 {
				return
			}
			if got := string(out.Body()); got != tt.want || respField(out, "Content-Encoding") != tt.wantCoding {
				t.Errorf("body %q in coding %q, want %q in %q", got, respField(out, "Content-Encoding"), tt.want, tt.wantCoding)
			}
			if tt.wantCoding == "" && respField(out, "Age") != "" {
				t.Errorf("an assembled page made now carries Age %s", respField(out, "Age"))
			}
			if got := respField(out, "Set-Cookie"); got != "s=1" {
				t.Errorf("Set-Cookie %q, want the origin's", got)
			}
		})
	}
}
