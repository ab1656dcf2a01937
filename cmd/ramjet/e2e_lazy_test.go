package main_test

// End-to-end tests of what ramjet builds only when a site uses it
// (issue 33): the WAF's rule set (Coraza + the CRS, tens of MiB) is
// compiled by the load or reload that turns a site's WAF on, never by a
// configuration without one.

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestWAFRuleSetIsBuiltOnlyWhenASiteTurnsItOn(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	dir := t.TempDir()
	cfg := func(mode string) string { return fmt.Sprintf("defaults:\n  waf:\n    mode: %s\n", mode) }
	path := testbed.WriteConfig(t, dir, cfg("off"))
	rj := startRamjet(t, o.URL, "--config", path)
	c, ns := newClient(t), nsFor(t)
	sqli := attacks[0]
	wafState := func() (sets, compiled float64) {
		t.Helper()
		sets, ok := metric(t, c, rj, "ramjet_waf_rule_sets")
		compiled, ok2 := metric(t, c, rj, "ramjet_waf_rule_set_compiles_total")
		if !ok || !ok2 {
			t.Fatal("/metrics lacks ramjet_waf_rule_sets or ramjet_waf_rule_set_compiles_total")
		}
		return sets, compiled
	}
	check := func(what string, status int, wantSets, wantCompiled float64) {
		t.Helper()
		if r := sqli.send(t, c, rj.URL, ns); r.Status != status {
			t.Errorf("%s: %s answered %d, want %d", what, sqli.name, r.Status, status)
		}
		if sets, compiled := wafState(); sets != wantSets || compiled != wantCompiled {
			t.Fatalf("%s: %v rule sets held, %v compiled; want %v and %v", what, sets, compiled, wantSets, wantCompiled)
		}
	}
	reload := func(mode string) {
		t.Helper()
		from := len(rj.Output())
		testbed.WriteConfig(t, dir, cfg(mode))
		rj.WaitOutput(t, from, "config reloaded", 60*time.Second)
	}
	check("WAF off", http.StatusOK, 0, 0) // nothing built
	reload("block")
	check("after the reload that turned the WAF on", http.StatusForbidden, 1, 1)
	reload("off")
	check("WAF off again", http.StatusOK, 0, 1) // the set dropped, none compiled anew
}
