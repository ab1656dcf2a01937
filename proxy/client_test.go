package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/realip"
)

// send is get with any method and repeated header lines ("Name: value").
func send(t *testing.T, method, url string, lines ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		name, value, _ := strings.Cut(l, ": ")
		req.Header.Add(name, value)
	}
	return roundTrip(t, req)
}

// xffOrigin answers every request uncached with the X-Forwarded-For it
// got.
func xffOrigin(t *testing.T) *testOrigin {
	return newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, strings.Join(r.Header.Values("X-Forwarded-For"), " | "))
	})
}

// TestOriginGetsTheClientNotTheProxy: the test client connects from
// 127.0.0.1; trusted, it is a proxy naming its client in the header.
func TestOriginGetsTheClientNotTheProxy(t *testing.T) {
	tests := []struct {
		name   string
		realIP realip.Config
		lines  []string
		want   string // X-Forwarded-For at the origin
	}{
		{"no real_ip, no header: the peer", realip.Config{}, nil, "127.0.0.1"},
		{"no real_ip: the header is a claim before the peer", realip.Config{}, []string{"X-Forwarded-For: 6.6.6.6"}, "6.6.6.6, 127.0.0.1"},
		{"no real_ip: every line of it", realip.Config{}, []string{"X-Forwarded-For: 6.6.6.6", "X-Forwarded-For: 7.7.7.7"}, "6.6.6.6, 7.7.7.7, 127.0.0.1"},
		{"trusted proxy: its client, once", realip.Config{From: mustPrefixes(t, "127.0.0.1/32")}, []string{"X-Forwarded-For: 203.0.113.5"}, "203.0.113.5"},
		{"trusted proxy: the client's own claims stay before it", realip.Config{From: mustPrefixes(t, "127.0.0.1/32")},
			[]string{"X-Forwarded-For: 6.6.6.6, 203.0.113.5"}, "6.6.6.6, 203.0.113.5"},
		{"trusted proxies' hops are theirs and go", realip.Config{From: mustPrefixes(t, "127.0.0.1/32", "10.0.0.0/8")},
			[]string{"X-Forwarded-For: 6.6.6.6", "X-Forwarded-For: 203.0.113.5, 10.0.0.2"}, "6.6.6.6, 203.0.113.5"},
		{"trusted proxy without a header: itself", realip.Config{From: mustPrefixes(t, "127.0.0.1/32")}, nil, "127.0.0.1"},
		{"untrusted peer: a spoofed chain is a claim", realip.Config{From: mustPrefixes(t, "10.0.0.0/8")},
			[]string{"X-Forwarded-For: 10.0.0.1"}, "10.0.0.1, 127.0.0.1"},
		{"X-Real-IP names the client, X-Forwarded-For goes on whole", realip.Config{From: mustPrefixes(t, "127.0.0.1/32"), Header: "X-Real-IP"},
			[]string{"X-Real-IP: 203.0.113.5", "X-Forwarded-For: 6.6.6.6"}, "6.6.6.6, 203.0.113.5"},
	}
	o := xffOrigin(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(o.URL)
			cfg.RealIP = tt.realIP
			_, base := startProxy(t, cfg)
			if got := send(t, "GET", base+"/x", tt.lines...).body; got != tt.want {
				t.Errorf("origin got X-Forwarded-For %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPurgeTrustsTheClientBehindAProxy: PURGE trust goes by the client
// the trusted proxy names, never by the proxy's own address.
func TestPurgeTrustsTheClientBehindAProxy(t *testing.T) {
	o := purgeOrigin(t)
	cfg := testConfig(o.URL)
	cfg.RealIP.From = mustPrefixes(t, "127.0.0.1/32")
	cfg.PurgeAllow = mustPrefixes(t, "192.0.2.0/24")
	_, base := startProxy(t, cfg)
	tests := []struct {
		name  string
		lines []string
		want  int
	}{
		{"an outside client through the proxy", []string{"X-Forwarded-For: 203.0.113.5"}, http.StatusMethodNotAllowed},
		{"an outside client naming a trusted purger first", []string{"X-Forwarded-For: 192.0.2.1, 203.0.113.5"}, http.StatusMethodNotAllowed},
		{"the proxy itself, not a trusted purger", nil, http.StatusMethodNotAllowed},
		{"a trusted purger through the proxy", []string{"X-Forwarded-For: 192.0.2.1"}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			get(t, base+"/a")
			r := send(t, "PURGE", base+"/a", tt.lines...)
			if r.status != tt.want {
				t.Fatalf("PURGE: %d %q, want %d", r.status, r.body, tt.want)
			}
			purged := get(t, base+"/a").cacheStatus != "ramjet; hit"
			if purged != (tt.want == http.StatusOK) {
				t.Errorf("page purged: %v", purged)
			}
		})
	}
}

// TestPrivateIdentityIsTheClientsBehindAProxy: two clients with the same
// session behind one proxy are two identities; the proxy's address is
// not what tells them apart.
func TestPrivateIdentityIsTheClientsBehindAProxy(t *testing.T) {
	o := xffOrigin(t)
	cfg := testConfig(o.URL)
	cfg.RealIP.From = mustPrefixes(t, "127.0.0.1/32")
	p := newTestProxy(t, cfg, nil)
	ids := map[string]uint64{}
	var last uint64
	probe := func(r *request) verdict { last = r.identity(); return proceed }
	p.steps = newSteps(insertStage(pipeline(), "key", stage{name: "probe", run: probe}))
	base := serveProxy(t, p)
	for _, client := range []string{"203.0.113.5", "203.0.113.6", "203.0.113.5"} {
		send(t, "GET", base+"/x", "Cookie: session=s", "X-Forwarded-For: "+client)
		if prev, ok := ids[client]; ok && prev != last {
			t.Errorf("%s: identity changed between requests", client)
		}
		ids[client] = last
	}
	if ids["203.0.113.5"] == ids["203.0.113.6"] || ids["203.0.113.5"] == 0 {
		t.Errorf("identities %v: want two different ones", ids)
	}
}
