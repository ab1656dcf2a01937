package main_test

import (
	"fmt"
	"testing"
)

// Equivalent Accept-Language values (order of equal preferences aside,
// case, white space, q=1) are one variant; different ones are not.
func TestEquivalentAcceptLanguagesShareAVariant(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/lang", freshAnswer{header: []string{"Cache-Control: max-age=300", "Vary: Accept-Language"}})
	first := get(t, c, rj.URL+"/lang", "Accept-Language: en-US, de;q=0.8")
	for _, v := range []string{"en-us,de;q=0.8", "de;q=0.8, en-US", "en-US;q=1, de;q=0.80, fr;q=0"} {
		if r := get(t, c, rj.URL+"/lang", "Accept-Language: "+v); string(r.Body) != string(first.Body) {
			t.Errorf("Accept-Language %q: %q (%s), want the variant of %q", v, r.Body, r.Header.Get("Cache-Status"), "en-US, de;q=0.8")
		}
	}
	if r := get(t, c, rj.URL+"/lang", "Accept-Language: de, en-US;q=0.8"); string(r.Body) == string(first.Body) {
		t.Error("a different preference got the same variant")
	}
}

// A selecting header with endless values does not grow one URL's object
// without bound: past the variant cap the oldest go, counted in /metrics.
func TestVariantsPastTheCapAreCounted(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/many", freshAnswer{header: []string{"Cache-Control: max-age=300", "Vary: X-Unbounded"}})
	for i := range 40 {
		get(t, c, rj.URL+"/many", fmt.Sprintf("X-Unbounded: %d", i))
	}
	if n, _ := metric(t, c, rj, "ramjet_cache_variants_dropped_total"); n != 8 {
		t.Fatalf("ramjet_cache_variants_dropped_total = %v after 40 variants of one URL, want 8 (cap 32)", n)
	}
}

// A request whose Accept-Language matches no stored variant still takes
// one whose Content-Language is the language it prefers most; a request
// that prefers another language, or only a narrower one, goes to the
// origin.
func TestARequestPreferringTheStoredContentLanguageTakesThatVariant(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/de", freshAnswer{header: []string{"Cache-Control: max-age=300", "Vary: Accept-Language", "Content-Language: de"}})
	first := get(t, c, rj.URL+"/de", "Accept-Language: de-CH;q=0.5, de")
	tests := []struct {
		accept string
		reused bool
	}{
		{"de, en;q=0.5", true},
		{"en;q=0.2, de-DE;q=0.9, de;q=0.9", true},
		{"fr, de;q=0.9", false},
		{"de-AT", false},
	}
	for _, tt := range tests {
		r := get(t, c, rj.URL+"/de", "Accept-Language: "+tt.accept)
		reused := string(r.Body) == string(first.Body)
		if reused != tt.reused {
			t.Errorf("Accept-Language %q: reused the de variant %v (%s), want %v", tt.accept, reused, r.Header.Get("Cache-Status"), tt.reused)
		}
		if reused && !r.CacheStatus().FreshHit() {
			t.Errorf("Accept-Language %q: Cache-Status %q, want a fresh hit", tt.accept, r.Header.Get("Cache-Status"))
		}
	}
	if full, _ := o.counts("/de"); full != 3 {
		t.Fatalf("origin answered %d times, want 3 (the first, fr, de-AT)", full)
	}
}

// Values of a selecting header ramjet knows nothing about select one
// variant whatever white space they hold.
func TestUnknownSelectingHeadersIgnoreWhiteSpace(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/thing", freshAnswer{header: []string{"Cache-Control: max-age=300", "Vary: X-Thing"}})
	first := get(t, c, rj.URL+"/thing", "X-Thing: a, b")
	for _, v := range []string{"a,b", "a ,  b", "\ta,b "} {
		if r := get(t, c, rj.URL+"/thing", "X-Thing: "+v); string(r.Body) != string(first.Body) {
			t.Errorf("X-Thing %q: %q (%s), want the variant of \"a, b\"", v, r.Body, r.Header.Get("Cache-Status"))
		}
	}
	if r := get(t, c, rj.URL+"/thing", "X-Thing: b, a"); string(r.Body) == string(first.Body) {
		t.Error("another order of an unknown header's values got the same variant")
	}
}
