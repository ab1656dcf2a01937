package proxy

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/purge"
)

// purgeOrigin serves tagged, cacheable pages; /purger answers with the
// purge header given in its query.
func purgeOrigin(t *testing.T) *testOrigin {
	return newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/purger" {
			w.Header().Set("X-LiteSpeed-Purge", r.URL.Query().Get("h"))
			io.WriteString(w, "purging")
			return
		}
		w.Header().Set("Cache-Control", "max-age=600")
		w.Header().Set("X-LiteSpeed-Tag", "page,"+strings.TrimPrefix(r.URL.Path, "/"))
		io.WriteString(w, r.URL.Path)
	})
}

func TestResponsePurgeHeaderInvalidates(t *testing.T) {
	tests := []struct {
		name, header string
		purgedA      bool // /a carries tags page,a
		purgedB      bool // /b carries tags page,b
		soft         bool
	}{
		{"tag", "tag=a", true, false, false},
		{"bare tag list", "a, b", true, true, false},
		{"shared tag", "page", true, true, false},
		{"everything", "*", true, true, false},
		{"url item", "/b", false, true, false},
		{"prefix wildcard", "pa*", true, true, false},
		{"stale group", "public, stale, a", true, false, true},
		{"per-item stale", "a~s", true, false, true},
		{"private scope leaves public entries", "private, *", false, false, false},
		{"unknown tag", "tag=zzz", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := purgeOrigin(t)
			_, base := startProxy(t, testConfig(o.URL))
			get(t, base+"/a")
			get(t, base+"/b")
			r := get(t, base+"/purger?h="+url.QueryEscape(tt.header))
			if r.header.Get("X-Litespeed-Purge") != "" {
				t.Fatal("purge header reached the client")
			}
			check := func(path string, purged bool) {
				got := get(t, base+path).cacheStatus
				switch {
				case !purged && got != "ramjet; hit":
					t.Errorf("%s: %q, want a hit", path, got)
				case purged && tt.soft && got != "ramjet; hit; fwd=stale":
					t.Errorf("%s: %q, want stale served while refreshing", path, got)
				case purged && !tt.soft && !strings.HasPrefix(got, "ramjet; fwd=miss"):
					t.Errorf("%s: %q, want a miss", path, got)
				}
			}
			check("/a", tt.purgedA)
			check("/b", tt.purgedB)
		})
	}
}

func TestPurgeMethodOnlyFromTrustedNetworks(t *testing.T) {
	o := purgeOrigin(t)
	cfg := testConfig(o.URL)
	cfg.PurgeAllow = mustPrefixes(t, "10.0.0.0/8")
	_, base := startProxy(t, cfg)
	get(t, base+"/a")
	req, _ := http.NewRequest("PURGE", base+"/a", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("untrusted PURGE: %d, want 405", resp.StatusCode)
	}
	if got := get(t, base+"/a").cacheStatus; got != "ramjet; hit" {
		t.Fatalf("after refused PURGE: %q, want the entry kept", got)
	}
}

func TestPurgeMethodFromLoopback(t *testing.T) {
	o := purgeOrigin(t)
	_, base := startProxy(t, testConfig(o.URL))
	for _, m := range []struct{ method, want string }{{"PURGE", "ramjet; fwd=miss; stored"}, {"REFRESH", "ramjet; hit; fwd=stale"}} {
		t.Run(m.method, func(t *testing.T) {
			get(t, base+"/a?x=1")
			get(t, base+"/a?x=1")
			req, _ := http.NewRequest(m.method, base+"/a?x=1", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"urls":1`) {
				t.Fatalf("%s: %d %s", m.method, resp.StatusCode, body)
			}
			if got := get(t, base+"/a?x=1").cacheStatus; got != m.want {
				t.Fatalf("after %s: %q, want %q", m.method, got, m.want)
			}
		})
	}
}

func purgeTag(tag string) purge.Command {
	return purge.Command{Targets: []purge.Target{{Kind: purge.KindTag, Value: tag}}}
}
