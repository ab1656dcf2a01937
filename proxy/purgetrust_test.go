package proxy

import (
	"testing"

	"github.com/ramjet-proxy/ramjet/purge"
)

// Loopback runs every tenant's PHP: a PURGE from it reaches a site that
// has a token only with that token (or the operator's), and every site
// only with the operator's.
func TestAPurgeRequestNeedsItsSitesToken(t *testing.T) {
	tests := []struct {
		name, host, auth string
		status           int
		bPurged          bool
	}{
		{"no token", "b.test", "", 401, false},
		{"the site's token", "b.test", "Bearer tb", 200, true},
		{"the operator's token", "b.test", "Bearer op", 200, true},
		{"another site's token", "b.test", "Bearer ta", 403, false},
		{"a site without a token", "unlisted.test", "", 200, false},
		{"every site without the operator's token", "", "", 401, false},
		{"every site with the operator's token", "", "Bearer op", 200, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := twoSites(t)
			g := p.gen.Load()
			g.cfg.PurgeTokens = purge.Tokens{Operator: "op", Sites: []purge.SiteToken{{Token: "ta", Site: "a.test"}, {Token: "tb", Site: "b.test"}}}
			warm(t, p, "a.test", "/p", "b.test", "/p")
			ctx := requestCtx("PURGE", tt.host, "/", false)
			ctx.Request.Header.Set("Surrogate-Key", "home")
			if tt.host == "" {
				ctx.Request.Header.SetProtocol("HTTP/1.0") // an HTTP/1.1 request without Host is 400
			}
			if tt.auth != "" {
				ctx.Request.Header.Set("Authorization", tt.auth)
			}
			p.ServeFastHTTP(ctx)
			if got := ctx.Response.StatusCode(); got != tt.status {
				t.Fatalf("PURGE Host %q %q: status %d, want %d (%q)", tt.host, tt.auth, got, tt.status, ctx.Response.Body())
			}
			if cached(t, p, "b.test", "/p") == tt.bPurged {
				t.Errorf("b.test/p purged=%v, want %v", !cached(t, p, "b.test", "/p"), tt.bPurged)
			}
		})
	}
}
