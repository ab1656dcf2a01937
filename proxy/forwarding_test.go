package proxy

import (
	"bufio"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/realip"
)

// fieldsOrigin answers every request uncached with every line it got of
// the fields the test names, "Name: v1 | v2" per line, "Name: " for none.
func fieldsOrigin(t *testing.T) *testOrigin {
	return newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		for _, name := range r.URL.Query()["f"] {
			fmt.Fprintf(w, "%s: %s\n", name, strings.Join(r.Header.Values(name), " | "))
		}
	})
}

// originFields asks base for fields, sending lines, and returns what the
// origin got of each.
func originFields(t *testing.T, base string, fields []string, lines ...string) map[string]string {
	t.Helper()
	q := url.Values{"f": fields}
	body := send(t, "GET", base+"/fields?"+q.Encode(), lines...).body
	got := map[string]string{}
	for line := range strings.Lines(body) {
		name, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
		got[name] = v
	}
	return got
}

// TestForwardingFieldsReplaceEveryClientLine: a field ramjet sets reaches
// the origin as one line, ramjet's, however many a client sent (fasthttp's
// Set replaces the first only, and PHP behind nginx reads the last); one
// ramjet sets only on the site's word reaches it from nobody else.
func TestForwardingFieldsReplaceEveryClientLine(t *testing.T) {
	o := fieldsOrigin(t)
	sent := []string{
		"X-Forwarded-Host: a.example", "X-Forwarded-Host: evil.example",
		"X-Forwarded-Proto: https", "X-Forwarded-Proto: https",
		"Surrogate-Capability: ramjet=\"Surrogate/1.0 ESI/1.0\"", "Surrogate-Capability: evil=\"ESI/1.0\"",
		"X-LSCACHE: on", "X-LSCACHE: crawler",
		"X-LSCACHE-VARY-VALUE: ismobile", "x-lscache-vary-value: ismobile",
		"X-Ramjet-Remote-Port: 1", "X-Ramjet-Server-Addr: 6.6.6.6",
	}
	fields := []string{"X-Forwarded-Host", "X-Forwarded-Proto", "Surrogate-Capability", "X-Lscache",
		"X-Lscache-Vary-Value", "X-Ramjet-Remote-Port", "X-Ramjet-Server-Addr"}
	for _, lscache := range []bool{false, true} {
		t.Run(fmt.Sprintf("lscache_header=%v", lscache), func(t *testing.T) {
			cfg := testConfig(o.URL)
			cfg.Default.LSCacheHeader = lscache
			_, base := startProxy(t, cfg)
			host := strings.TrimPrefix(base, "http://")
			want := map[string]string{
				"X-Forwarded-Host":     host,
				"X-Forwarded-Proto":    "http",
				"Surrogate-Capability": `ramjet="Surrogate/1.0"`,
				"X-Lscache":            "",
				"X-Lscache-Vary-Value": "",
				"X-Ramjet-Remote-Port": "",
				"X-Ramjet-Server-Addr": "",
			}
			if lscache {
				want["X-Lscache"] = "on"
			}
			got := originFields(t, base, fields, sent...)
			for _, name := range fields {
				if got[name] != want[name] {
					t.Errorf("origin got %s %q, want %q", name, got[name], want[name])
				}
			}
		})
	}
}

// TestTerminatorFieldsOnlyFromTrustedPeers: the fields that say who the
// client is or how it came reach the origin from a terminator in
// real_ip.from as it sent them, and from nobody else.
func TestTerminatorFieldsOnlyFromTrustedPeers(t *testing.T) {
	o := fieldsOrigin(t)
	sent := map[string]string{
		"Forwarded":          "for=6.6.6.6;proto=https;host=evil.example",
		"X-Real-Ip":          "6.6.6.6",
		"X-Forwarded-Port":   "443",
		"X-Forwarded-Prefix": "/evil",
		"X-Forwarded-Ssl":    "on",
		"X-Forwarded-Scheme": "https",
		"Front-End-Https":    "on",
		"Cf-Connecting-Ip":   "203.0.113.5",
	}
	var lines, fields []string
	for name, v := range sent {
		lines, fields = append(lines, name+": "+v), append(fields, name)
	}
	tests := []struct {
		name    string
		realIP  realip.Config
		trusted bool
	}{
		{"no real_ip: nobody's", realip.Config{}, false},
		{"a peer outside real_ip.from", realip.Config{From: mustPrefixes(t, "10.0.0.0/8"), Header: "CF-Connecting-IP"}, false},
		{"a trusted peer's, as it sent them", realip.Config{From: mustPrefixes(t, "127.0.0.1/32"), Header: "CF-Connecting-IP"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(o.URL)
			cfg.RealIP = tt.realIP
			_, base := startProxy(t, cfg)
			got := originFields(t, base, fields, lines...)
			for name, v := range sent {
				want := ""
				if tt.trusted || (name == "Cf-Connecting-Ip" && tt.realIP.Header == "") {
					want = v // not real_ip's header: an ordinary field
				}
				if got[name] != want {
					t.Errorf("origin got %s %q, want %q", name, got[name], want)
				}
			}
		})
	}
}

// TestReplaceFieldLeavesOneLine pins what replaceField works around and
// keeps: fasthttp's Set replaces only the first line of a name; with one
// line there, the fields keep their order.
func TestReplaceFieldLeavesOneLine(t *testing.T) {
	parse := func(lines string) *fasthttp.RequestHeader {
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: a\r\n" + lines + "\r\n"))); err != nil {
			t.Fatal(err)
		}
		return &h
	}
	two := "X-Forwarded-Host: one\r\nAccept: x\r\nx-forwarded-host: two\r\n"
	h := parse(two)
	h.Set("X-Forwarded-Host", "ramjet")
	if got := len(h.PeekAll("X-Forwarded-Host")); got != 2 {
		t.Fatalf("fasthttp's Set left %d lines: replaceField's workaround may be obsolete", got)
	}
	h = parse(two)
	replaceField(h, hdrForwardedHost, []byte("ramjet"))
	if got := h.PeekAll("X-Forwarded-Host"); len(got) != 1 || string(got[0]) != "ramjet" {
		t.Errorf("after replaceField: %q, want just ramjet", got)
	}
	h = parse("Accept: 1\r\nX-Forwarded-Host: one\r\nAccept: 2\r\nB: b\r\n")
	replaceField(h, hdrForwardedHost, []byte("ramjet"))
	var order []string
	for k, v := range h.All() {
		order = append(order, string(k)+"="+string(v))
	}
	if got, want := strings.Join(order, " "), "Host=a Accept=1 X-Forwarded-Host=ramjet Accept=2 B=b"; got != want {
		t.Errorf("fields %s, want %s", got, want)
	}
}

// TestForwardingKeepsTheClientsFieldOrder: setting X-Forwarded-For over
// the client's one line leaves the other fields in their order, so two
// lines of one name reach the origin as the client sent them (fasthttp's
// Del moves the last field into the deleted one's place).
func TestForwardingKeepsTheClientsFieldOrder(t *testing.T) {
	got := make(chan []string, 1)
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		got <- r.Header.Values("Accept-Language")
	})
	p := newTestProxy(t, testConfig(o.URL), nil)
	ctx := requestCtx("GET", "order.test", "/order", false)
	raw := "GET /order HTTP/1.1\r\nHost: order.test\r\nX-Forwarded-For: 6.6.6.6\r\nAccept-Language: fr\r\n" +
		"X-Other: 1\r\nAccept-Language: en\r\n\r\n" // as on the wire: net/http's client sorts the names
	if err := ctx.Request.Header.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	p.ServeFastHTTP(ctx) // returns once the origin has answered
	select {
	case v := <-got:
		if got, want := strings.Join(v, " | "), "fr | en"; got != want {
			t.Errorf("origin got Accept-Language %q, want %q", got, want)
		}
	default:
		t.Fatalf("the origin got no request: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
}
