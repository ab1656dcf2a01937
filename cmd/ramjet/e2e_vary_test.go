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
