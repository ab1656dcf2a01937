package h2

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// Each kind of connection this package serves tells the request what it
// is through streamctx.Transport: HTTP/2 or HTTP/1.1, and on a
// behind_tls listener that the TLS was the terminator's, whose own
// address the peer is (no PROXY header here).
func TestTransportTellsEachConnectionItsProtocolAndTLS(t *testing.T) {
	for _, behindTLS := range []bool{false, true} {
		srv := start(t, Config{Name: "h2c", Addr: "127.0.0.1:0", H2C: true, BehindTLS: behindTLS, ReadTimeout: 5 * time.Second}, echo)
		url := "http://" + srv.Addr().String() + "/proto"
		b := strconv.FormatBool(behindTLS)
		for name, c := range map[string]*http.Client{"h2c": h2cClient(t), "h1": plainClient(t)} {
			proto := ""
			if name == "h2c" {
				proto = "HTTP/2.0"
			}
			want := fmt.Sprintf("proto=%q behind=%s terminator=%s", proto, b, b)
			if _, body := get(t, c, url); string(body) != want {
				t.Errorf("%s, behind_tls=%v: %s, want %s", name, behindTLS, body, want)
			}
		}
	}
}

// An interim response sent through the transport reaches an HTTP/2
// client as a HEADERS frame before the answer's, connection fields left
// out; a 101 is no interim response in HTTP/2 and sends nothing.
func TestTransportSendsInterimResponsesOnTheStream(t *testing.T) {
	sent := make(chan string, 2)
	env := startTLS(t, func(ctx *fasthttp.RequestCtx) {
		tr := streamctx.TransportOf(ctx)
		link := [][2][]byte{{[]byte("Link"), []byte("</a.css>; rel=preload")}, {[]byte("Connection"), []byte("close")}}
		sent <- fmt.Sprint(tr.SendInterim(ctx, http.StatusSwitchingProtocols, nil), tr.SendInterim(ctx, http.StatusEarlyHints, link))
		ctx.SetBodyString("answer")
	}, nil)
	var hints []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		hints = append(hints, fmt.Sprintf("%d link=%s connection=%s", code, strings.Join(h.Values("Link"), ","), h.Get("Connection")))
		return nil
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, env.url("/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := env.h2Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := <-sent; got != "false true" {
		t.Errorf("SendInterim 101, 103 reported %s, want false true", got)
	}
	if want := "103 link=</a.css>; rel=preload connection="; len(hints) != 1 || hints[0] != want {
		t.Errorf("interim responses %q, want [%q]", hints, want)
	}
}
