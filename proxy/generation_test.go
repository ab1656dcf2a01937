package proxy

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
	"github.com/ramjet-proxy/ramjet/proxy/docroot"
)

// A reload that fails part way — a later site's PHP pool that cannot
// start, docroot that is missing or log file that cannot open — gives
// back everything the new generation took by then (the PHP workers
// started, the docroot directories and log files opened, the sites'
// metric series made), and the running one serves on.
func TestFailedReloadClosesEverythingItBuiltAndKeepsServing(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, "origin "+r.URL.Path)
	})
	exits := filepath.Join(testbed.PublicDir(t), "php-cgi")
	if err := os.WriteFile(exits, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		third func(t *testing.T, s *Site) // breaks the third site
	}{
		{"a PHP pool cannot start", func(t *testing.T, s *Site) {
			s.Docroot.PHP.Binary = exits
		}},
		{"a docroot is missing", func(t *testing.T, s *Site) {
			s.Docroot.Root = filepath.Join(t.TempDir(), "missing")
		}},
		{"a log file cannot open", func(t *testing.T, s *Site) {
			s.AccessLog.Path = filepath.Join(t.TempDir(), "missing", "access.log")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestProxy(t, testConfig(o.URL), nil)
			running := p.gen.Load()
			children := len(testbed.Children(os.Getpid()))

			bad := testConfig(o.URL)
			b, c := docrootSite(t, "b.test"), docrootSite(t, "c.test")
			b.CacheSize, c.CacheSize = 1<<20, 1<<20
			tt.third(t, &c)
			bad.Sites = []Site{b, c}
			err := p.Reload(t.Context(), bad)
			if err == nil {
				t.Fatal("the reload succeeded")
			}

			if p.gen.Load() != running {
				t.Fatal("the failed reload replaced the running generation")
			}
			if r := get(t, serveProxy(t, p)+"/still"); r.status != 200 || r.body != "origin /still" {
				t.Errorf("after the failed reload: %d %q, want the origin's page", r.status, r.body)
			}
			for _, s := range []Site{b, c} {
				if real, err := filepath.EvalSymlinks(s.Docroot.Root); err == nil && openHere(real) {
					t.Errorf("%s: docroot %s still open", s.Names[0], real)
				}
				if openHere(s.AccessLog.Path) {
					t.Errorf("%s: access log %s still open", s.Names[0], s.AccessLog.Path)
				}
			}
			if n := len(testbed.Children(os.Getpid())); n != children {
				t.Errorf("%d PHP processes after the failed reload, %d before", n, children)
			}
			m := metricsOf(t, p)
			for series := range m {
				if strings.Contains(series, `site="b.test"`) || strings.Contains(series, `site="c.test"`) {
					t.Errorf("series %s of a site that never served", series)
				}
			}
		})
	}
}

// docrootSite is a docroot site of name with a PHP pool of one worker
// and an access log of its own.
func docrootSite(t *testing.T, name string) Site {
	t.Helper()
	return Site{Names: []string{name}, Cache: true,
		AccessLog: AccessLog{Path: filepath.Join(t.TempDir(), name+".log"), Format: accesslog.Ramjet},
		Docroot: &Docroot{Config: docroot.Config{Root: testbed.PublicDir(t)},
			PHP: &phppool.Config{Binary: testbed.PHPCGI(t), Min: 1, Max: 1}}}
}
