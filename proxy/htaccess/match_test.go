package htaccess

import (
	"testing"
)

// TestMatcherAgreesWithRegexp: the literal fast paths answer exactly as
// the compiled pattern does.
func TestMatcherAgreesWithRegexp(t *testing.T) {
	pats := []struct {
		pat  string
		fold bool
		fast bool
	}{
		{`Mobile|Android|Silk/|Kindle|BlackBerry|Opera\ Mini|Opera\ Mobi`, true, true},
		{`^index\.php$`, false, true},
		{`image/webp`, false, true},
		{`\.litespeed_conf\.dat`, false, true},
		{`^www\.`, true, true},
		{`\.php$`, false, true},
		{`.*`, false, true},
		{`.`, false, true},
		{`a||b`, false, false},
		{`^a$|^b`, false, true},
		{`iPhone\ OS\ (1[4-9]|[2-9][0-9])`, false, false},
		{`\d+`, false, false},
	}
	subjects := []string{"", "\n", "x", "Mozilla/5.0 (Linux; Android 14) Mobile", "OPERA MINI/8", "index.php", "xindex.php",
		"image/webp,*/*", "a.litespeed_conf.dat", "WWW.example.com", "x.php", "x.phps", "a", "b", "ba", "\u212Aindle", "silk/", "123"}
	for _, p := range pats {
		re, err := compileRegex(p.pat, p.fold)
		if err != nil {
			t.Fatal(err)
		}
		m := newMatcher(re, p.pat, p.fold)
		if (m.kind != matchRegex) != p.fast {
			t.Errorf("%q: fast path %v, want %v", p.pat, m.kind != matchRegex, p.fast)
		}
		for _, s := range subjects {
			if got, want := m.match([]byte(s)), re.MatchString(s); got != want {
				t.Errorf("%q on %q: %v, regexp %v", p.pat, s, got, want)
			}
		}
	}
}

func FuzzMatcherAgreesWithRegexp(f *testing.F) {
	f.Add(`Mobile|Android|Opera\ Mini`, true, "opera mini")
	f.Add(`^index\.php$`, false, "index.php")
	f.Add(`a|^b$|c$`, true, "xC")
	f.Fuzz(func(t *testing.T, pat string, fold bool, s string) {
		re, err := compileRegex(pat, fold)
		if err != nil {
			return
		}
		m := newMatcher(re, pat, fold)
		if got, want := m.match([]byte(s)), re.MatchString(s); got != want {
			t.Fatalf("%q (fold %v) on %q: %v, regexp %v", pat, fold, s, got, want)
		}
	})
}
