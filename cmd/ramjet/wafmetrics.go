package main

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/ramjet-proxy/ramjet/proxy/waf"
)

// registerWAFMetrics exposes what the WAF library holds: the rule sets
// in use and how many were compiled since the start. A configuration
// without a WAF shows 0 and 0, the CRS never built (it is built on the
// first load or reload that turns a site's WAF on).
func registerWAFMetrics(set *metrics.Set, lib *waf.Library) {
	set.NewGauge("ramjet_waf_rule_sets", func() float64 { return float64(lib.Len()) })
	set.NewGauge("ramjet_waf_rule_set_compiles_total", func() float64 { return float64(lib.Compiled()) })
}
