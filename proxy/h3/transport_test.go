package h3

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// A request over HTTP/3 learns so from its transport, over ramjet's own
// TLS; an interim response sent through it reaches the client as a
// HEADERS frame of its own (QPACK, :status 103) before the answer's,
// connection fields left out. A 101 sends nothing, nor does anything
// once the answer is being written.
func TestTransportTellsHTTP3AndSendsInterimResponses(t *testing.T) {
	told := make(chan string, 1)
	e := startEnv(t, func(ctx *fasthttp.RequestCtx) {
		tr := streamctx.TransportOf(ctx)
		link := [][2][]byte{{[]byte("Link"), []byte("</a.css>; rel=preload")}, {[]byte("Connection"), []byte("close")}}
		told <- fmt.Sprintf("%s %v %v %v %v", tr.Protocol().Version(), tr.BehindTLS(), tr.FromTerminator(),
			tr.SendInterim(ctx, http.StatusSwitchingProtocols, nil), tr.SendInterim(ctx, http.StatusEarlyHints, link))
		ctx.SetBodyString("answer")
	}, nil)
	c, _ := e.client(t)
	var hints []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		hints = append(hints, fmt.Sprintf("%d link=%s connection=%s", code, strings.Join(h.Values("Link"), ","), h.Get("Connection")))
		return nil
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, e.url("/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := <-told, "HTTP/3.0 false false false true"; got != want {
		t.Errorf("transport told %q, want %q", got, want)
	}
	if want := "103 link=</a.css>; rel=preload connection="; len(hints) != 1 || hints[0] != want {
		t.Errorf("interim responses %q, want [%q]", hints, want)
	}
	if resp.StatusCode != http.StatusOK || string(body) != "answer" {
		t.Errorf("answer %d %q, want 200 \"answer\"", resp.StatusCode, body)
	}
}

// Once the answer is being written, the stream takes no interim
// response, whoever holds the ctx.
func TestNoInterimResponseAfterTheAnswerStarted(t *testing.T) {
	st := &stream{}
	st.standin.st = st
	st.ctx = new(fasthttp.RequestCtx)
	st.answering = true
	if st.standin.SendInterim(st.ctx, http.StatusEarlyHints, nil) {
		t.Fatal("an interim response was sent after the answer started")
	}
	st.answering = false
	if st.standin.SendInterim(new(fasthttp.RequestCtx), http.StatusEarlyHints, nil) {
		t.Fatal("an interim response was sent for another stream's ctx")
	}
}
