package purge

import (
	"errors"
	"testing"
)

func TestMayPurgeNeedsTheSitesTokenWhenItHasOne(t *testing.T) {
	tokens := Tokens{Operator: "op", Sites: []SiteToken{{Token: "ta", Site: "a.test"}, {Token: "tb", Site: "b.test"}}}
	tests := []struct {
		name, auth, scope string
		want              error
	}{
		{"tokenless site, no token", "", "c.test", nil},
		{"tokenless site, basic credentials are no token", "Basic dTpw", "c.test", nil},
		{"site with a token, none sent", "", "a.test", ErrTokenNeeded},
		{"site with a token, its token", "Bearer ta", "a.test", nil},
		{"site with a token, another site's", "Bearer tb", "a.test", ErrOtherSite},
		{"tokenless site, another site's token", "Bearer tb", "c.test", ErrOtherSite},
		{"site with a token, the operator's", "Bearer op", "a.test", nil},
		{"site with a token, an unknown token", "Bearer guess", "a.test", ErrTokenNeeded},
		{"tokenless site, an unknown token", "Bearer guess", "c.test", ErrTokenNeeded},
		{"token with a suffix", "Bearer ta2", "a.test", ErrTokenNeeded},
		{"every site, no token", "", "", ErrTokenNeeded},
		{"every site, a site's token", "Bearer ta", "", ErrOtherSite},
		{"every site, the operator's", "Bearer op", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tokens.MayPurge([]byte(tt.auth), tt.scope); !errors.Is(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("MayPurge(%q, %q) = %v, want %v", tt.auth, tt.scope, got, tt.want)
			}
		})
	}
}

// Without an operator token nobody purges every site by PURGE, and an
// empty site token never matches an empty bearer.
func TestMayPurgeWithoutAnOperatorToken(t *testing.T) {
	tokens := Tokens{Sites: []SiteToken{{Token: "ta", Site: "a.test"}}}
	for _, auth := range []string{"", "Bearer ", "Bearer x"} {
		if err := tokens.MayPurge([]byte(auth), ""); !errors.Is(err, ErrTokenNeeded) {
			t.Errorf("MayPurge(%q, every site) = %v, want ErrTokenNeeded", auth, err)
		}
	}
}
