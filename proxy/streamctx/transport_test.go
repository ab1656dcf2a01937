package streamctx

import (
	"bufio"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// A connection of fasthttp's own is HTTP/1.1 over ramjet's TLS or none;
// it sends a 103 with its Link fields and nothing else as interim, and
// the final answer carries none of them.
func TestHTTP1TransportSendsOnlyEarlyHintsWithLinks(t *testing.T) {
	ln := fasthttputil.NewInmemoryListener()
	told := make(chan [4]any, 1)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		tr := TransportOf(ctx)
		link := [][2][]byte{{[]byte("Link"), []byte("</a.css>; rel=preload")}, {[]byte("X-Other"), []byte("1")}}
		told <- [4]any{tr.Protocol(), tr.BehindTLS() || tr.FromTerminator(),
			tr.SendInterim(ctx, http.StatusContinue, link) || tr.SendInterim(ctx, http.StatusEarlyHints, link[1:]),
			tr.SendInterim(ctx, http.StatusEarlyHints, link)}
		ctx.SetBodyString("answer")
	}}
	go srv.Serve(ln) //nolint:errcheck // ends with the listener
	t.Cleanup(func() { ln.Close() })
	c, err := ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	heads := exchange(t, c)
	if got := <-told; got != [4]any{HTTP1, false, false, true} {
		t.Errorf("protocol, behind TLS, a 100 or a 103 without Link sent, a 103 sent = %v", got)
	}
	want := "HTTP/1.1 103 Early Hints Link=</a.css>; rel=preload X-Other= | HTTP/1.1 200 OK Link= X-Other="
	if got := strings.Join(heads, " | "); got != want {
		t.Errorf("heads %q, want %q", got, want)
	}
}

// exchange sends a GET on c and returns the response heads it reads,
// interim ones first.
func exchange(t *testing.T, c net.Conn) []string {
	t.Helper()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	r := textproto.NewReader(bufio.NewReader(c))
	var heads []string
	for range 5 {
		line, err := r.ReadLine()
		if err != nil {
			t.Fatal(err)
		}
		h, err := r.ReadMIMEHeader()
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, line+" Link="+h.Get("Link")+" X-Other="+h.Get("X-Other"))
		if !strings.HasPrefix(line, "HTTP/1.1 1") {
			return heads
		}
	}
	t.Fatal("more than 5 heads")
	return nil
}

// The fields HTTP/2 and HTTP/3 send: names in lower case, connection
// fields and fasthttp's Content-Length left out, Server and Date added
// when the response has none, Content-Length as fasthttp would send it.
func TestFieldsAreWhatHTTP2AndHTTP3Send(t *testing.T) {
	var resp fasthttp.Response
	resp.Header.Set("X-Custom", "v")
	resp.Header.Set("Connection", "close")
	resp.Header.Set("Server", "app")
	resp.SetBodyString("hello")
	var f Fields
	f.Response(&resp, 200, false)
	got := map[string]string{}
	var order []string
	for name, v := range f.All() {
		got[string(name)] = string(v)
		order = append(order, string(name))
	}
	if got["x-custom"] != "v" || got["server"] != "app" || got["content-length"] != "5" || got["date"] == "" {
		t.Errorf("fields %v", got)
	}
	if _, ok := got["connection"]; ok || len(got) != len(order) {
		t.Errorf("fields %v in order %v: a connection field, or a field twice", got, order)
	}
	f.Interim([][2][]byte{{[]byte("Link"), []byte("<a>")}, {[]byte("Keep-Alive"), []byte("1")}})
	order = order[:0]
	for name, v := range f.All() {
		order = append(order, string(name)+"="+string(v))
	}
	if strings.Join(order, ",") != "link=<a>" {
		t.Errorf("interim fields %v, want [link=<a>]", order)
	}
	if n := testing.AllocsPerRun(100, func() { f.Response(&resp, 200, false) }); n != 0 {
		t.Errorf("%v allocations per response once grown", n)
	}
}
