package purge

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestHostGuardRefusesWhatABrowserSendsForAnotherPage(t *testing.T) {
	g := NewHostGuard([]string{"Ramjet.Internal"})
	tests := []struct {
		name, method, host string
		hdr                map[string]string
		want               int // 0: let through
	}{
		{name: "the listener's address", method: "POST", host: "127.0.0.1:9090"},
		{name: "an address without a port", method: "GET", host: "10.0.0.5"},
		{name: "an IPv6 address", method: "POST", host: "[::1]:9090"},
		{name: "localhost", method: "POST", host: "localhost:9090"},
		{name: "a configured name", method: "GET", host: "ramjet.internal:9090"},
		{name: "no Host (HTTP/1.0 health check)", method: "GET", host: ""},
		{name: "a rebound name", method: "GET", host: "attacker.example:9090", want: 421},
		{name: "a rebound name posting", method: "POST", host: "attacker.example", want: 421},
		{name: "localhost with a trailing dot", method: "GET", host: "localhost.:9090", want: 421},
		{name: "a subdomain of a configured name", method: "GET", host: "x.ramjet.internal", want: 421},
		{name: "its own origin", method: "POST", host: "127.0.0.1:9090", hdr: map[string]string{"Origin": "http://127.0.0.1:9090"}},
		{name: "a form from another origin", method: "POST", host: "127.0.0.1:9090", hdr: map[string]string{"Origin": "http://attacker.example"}, want: 403},
		{name: "a form from another port", method: "POST", host: "127.0.0.1:9090", hdr: map[string]string{"Origin": "http://127.0.0.1:8080"}, want: 403},
		{name: "a sandboxed page", method: "POST", host: "127.0.0.1:9090", hdr: map[string]string{"Origin": "null"}, want: 403},
		{name: "cross-site fetch metadata", method: "POST", host: "127.0.0.1:9090", hdr: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 403},
		{name: "same-site fetch metadata", method: "POST", host: "127.0.0.1:9090", hdr: map[string]string{"Sec-Fetch-Site": "same-site"}, want: 403},
		{name: "typed into the address bar", method: "POST", host: "127.0.0.1:9090", hdr: map[string]string{"Sec-Fetch-Site": "none"}},
		{name: "a read from another origin", method: "GET", host: "127.0.0.1:9090", hdr: map[string]string{"Origin": "http://attacker.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ctx fasthttp.RequestCtx
			ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
			ctx.Request.Header.SetMethod(tt.method)
			ctx.Request.SetRequestURI("/purge")
			ctx.Request.Header.SetHost(tt.host)
			for k, v := range tt.hdr {
				ctx.Request.Header.Set(k, v)
			}
			ok := g.Check(&ctx)
			switch {
			case tt.want == 0 && !ok:
				t.Errorf("refused with %d, want it let through", ctx.Response.StatusCode())
			case tt.want != 0 && (ok || ctx.Response.StatusCode() != tt.want):
				t.Errorf("let through %v, status %d; want %d", ok, ctx.Response.StatusCode(), tt.want)
			}
		})
	}
}

// Whatever the Host, the guard lets through only no Host, an address or
// one of its names: no spelling smuggles another name past it.
func FuzzHostGuardAnswers(f *testing.F) {
	for _, s := range []string{"", "127.0.0.1:9090", "[::1]:9090", "localhost", "ramjet.internal:1", "attacker.example:9090",
		"[attacker.example]:9090", "localhost:9090:9090", "[::1", "::1:9090", "RAMJET.INTERNAL", "fe80::1%eth0"} {
		f.Add(s)
	}
	g := NewHostGuard([]string{"ramjet.internal"})
	f.Fuzz(func(t *testing.T, host string) {
		if !g.answers([]byte(host)) || host == "" {
			return
		}
		h := strings.ToLower(hostOnly(host))
		if h == "localhost" || h == "ramjet.internal" {
			return
		}
		if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err != nil || a.Zone() != "" {
			t.Fatalf("answered Host %q, neither an address nor a name of its own", host)
		}
	})
}
