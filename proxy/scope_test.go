package proxy

import (
	"io"
	"net/http"
	"testing"

	"github.com/ramjet-proxy/ramjet/purge"
)

// twoSites serves two configured sites from one origin: every page is
// cacheable and tagged "home"; /purge?h=… answers with that purge header.
func twoSites(t *testing.T) (*Proxy, *testOrigin) {
	t.Helper()
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if h := r.URL.Query().Get("h"); h != "" {
			w.Header().Set("X-LiteSpeed-Purge", h)
			w.Header().Set("Cache-Control", "no-store")
			return
		}
		w.Header().Set("Cache-Control", "max-age=300")
		w.Header().Set("X-LiteSpeed-Tag", "home")
		io.WriteString(w, r.Host+r.URL.Path)
	})
	cfg := testConfig(o.URL)
	site := cfg.Default
	a, b := site, site
	a.Names, b.Names = []string{"a.test", "www.a.test"}, []string{"b.test"}
	cfg.Sites = []Site{a, b}
	return newTestProxy(t, cfg, nil), o
}

func cached(t *testing.T, p *Proxy, host, path string) bool {
	t.Helper()
	ctx := requestCtx("GET", host, path, false)
	p.ServeFastHTTP(ctx)
	return string(ctx.Response.Header.Peek("Cache-Status")) == "ramjet; hit"
}

func warm(t *testing.T, p *Proxy, hostPaths ...string) {
	t.Helper()
	for i := 0; i+1 < len(hostPaths); i += 2 {
		ctx := requestCtx("GET", hostPaths[i], hostPaths[i+1], false)
		p.ServeFastHTTP(ctx)
	}
}

// A site's purges — from its responses or its PURGE requests — reach
// only its own pages, whatever they name.
func TestASitesPurgesReachOnlyItsOwnPages(t *testing.T) {
	tests := []struct {
		name, header string
		aPurged      bool
	}{
		{"everything", "*", true},
		{"a tag both sites use", "tag=home", true},
		{"a URL of the other site", "http://b.test/p", false},
		{"a path", "/p", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := twoSites(t)
			warm(t, p, "a.test", "/p", "www.a.test", "/p", "b.test", "/p", "unlisted.test", "/p")
			purger := requestCtx("GET", "a.test", "/purge?h="+tt.header, false)
			p.ServeFastHTTP(purger)
			if cached(t, p, "a.test", "/p") == tt.aPurged {
				t.Errorf("a.test/p cached=%v after a.test's %q", !tt.aPurged, tt.header)
			}
			if tt.aPurged && cached(t, p, "www.a.test", "/p") {
				t.Errorf("www.a.test/p, the same site's other name, survived a.test's %q", tt.header)
			}
			for _, other := range []string{"b.test", "unlisted.test"} {
				if !cached(t, p, other, "/p") {
					t.Errorf("%s/p purged by a.test's %q", other, tt.header)
				}
			}
		})
	}
}

func TestAPurgeRequestReachesOnlyItsSite(t *testing.T) {
	p, _ := twoSites(t)
	warm(t, p, "a.test", "/p", "b.test", "/p")
	ctx := requestCtx("PURGE", "b.test", "/", false)
	ctx.Request.Header.Set("Surrogate-Key", "home")
	p.ServeFastHTTP(ctx)
	if cached(t, p, "b.test", "/p") || !cached(t, p, "a.test", "/p") {
		t.Fatal("PURGE to b.test with Surrogate-Key home: want b.test's page purged and a.test's kept")
	}
}

// The operator's purges (no site: the admin token, the CLI) reach every
// site.
func TestTheOperatorsPurgesReachEverySite(t *testing.T) {
	for _, target := range []purge.Target{{Kind: purge.KindTag, Value: "home"}, {Kind: purge.KindAll}} {
		p, _ := twoSites(t)
		warm(t, p, "a.test", "/p", "b.test", "/p", "unlisted.test", "/p")
		p.Purge(purge.Command{Targets: []purge.Target{target}})
		for _, h := range []string{"a.test", "b.test", "unlisted.test"} {
			if cached(t, p, h, "/p") {
				t.Errorf("operator purge %+v left %s/p", target, h)
			}
		}
	}
}

// Hosts no entry names are each a site of their own.
func TestUnlistedHostsAreSitesOfTheirOwn(t *testing.T) {
	p, _ := twoSites(t)
	warm(t, p, "one.test", "/p", "two.test", "/p")
	p.ServeFastHTTP(requestCtx("GET", "one.test", "/purge?h=*", false))
	if cached(t, p, "one.test", "/p") || !cached(t, p, "two.test", "/p") {
		t.Fatal("one.test's * must purge one.test only")
	}
}
