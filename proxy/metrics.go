package proxy

import (
	"io"
	"strconv"
	"sync"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/waf"
)

// Metrics are the proxy's counters, in a set of their own so that several
// proxies (tests) never collide in a global registry.
type Metrics struct {
	set *metrics.Set
	// more writes metrics kept outside the set (the PHP pools').
	more func(io.Writer)

	// pages count client requests by how the cache answered them;
	// fragments the includes of ESI pages, which go through the same
	// stages.
	pages, fragments                 requestCounters
	protocols                        protocolCounters
	storedPrivate                    *metrics.Counter
	esiFragmentErrors                *metrics.Counter
	esiMalformed                     *metrics.Counter
	stored, notStored                *metrics.Counter
	originErrors, originTimeouts     *metrics.Counter
	originRetries                    *metrics.Counter
	refreshes, reloads, reloadErrors *metrics.Counter
	// gapStale counts objects a fan-out gap left stale; gapRefreshes the
	// background refreshes of such entries.
	gapStale, gapRefreshes *metrics.Counter
	badPurgeHeaders        *metrics.Counter
	phpBusy, originBusy    *metrics.Counter
	crawlerRefused         *metrics.Counter
	warm                   warmMetrics
	waf                    wafMetrics
}

// requestCounters count requests by how the cache answered them.
type requestCounters struct {
	hit, hitPrivate, stale, staleError, miss, collapsed, bypass, pass, method *metrics.Counter
	// ownSite: the requests counted here are counted in their site's
	// counters too; fragments are not (each is part of its page's request).
	ownSite bool
}

// outcome is how a request's site counts it.
type outcome uint8

const (
	outHit outcome = iota
	outMiss
	outPass
)

// tally counts a request in n and, for a client's, in its site's
// counters too (a fragment is part of its page's request).
func (r *request) tally(n *metrics.Counter, o outcome) {
	n.Inc()
	if !r.c.ownSite {
		return
	}
	switch o {
	case outHit:
		r.s.state.hits.Inc()
	case outMiss:
		r.s.state.misses.Inc()
	case outPass:
		r.s.state.passes.Inc()
	}
}

func newRequestCounters(s *metrics.Set, name string, ownSite bool) requestCounters {
	c := func(kind string) *metrics.Counter { return s.NewCounter(name + `{cache="` + kind + `"}`) }
	return requestCounters{
		hit: c("hit"), hitPrivate: c("hit_private"), stale: c("stale"), staleError: c("stale_if_error"),
		miss: c("miss"), collapsed: c("collapsed"), bypass: c("bypass"), pass: c("pass"), method: c("method"),
		ownSite: ownSite,
	}
}

func newMetrics(c *cache.Cache) *Metrics {
	s := metrics.NewSet()
	m := &Metrics{
		set:               s,
		pages:             newRequestCounters(s, "ramjet_requests_total", true),
		fragments:         newRequestCounters(s, "ramjet_esi_fragments_total", false),
		protocols:         newProtocolCounters(s),
		storedPrivate:     s.NewCounter("ramjet_private_stores_total"),
		esiFragmentErrors: s.NewCounter("ramjet_esi_fragment_errors_total"),
		esiMalformed:      s.NewCounter("ramjet_esi_malformed_total"),
		stored:            s.NewCounter("ramjet_cache_stores_total"),
		notStored:         s.NewCounter("ramjet_cache_uncacheable_total"),
		originErrors:      s.NewCounter(`ramjet_origin_errors_total{kind="unavailable"}`),
		originTimeouts:    s.NewCounter(`ramjet_origin_errors_total{kind="timeout"}`),
		originRetries:     s.NewCounter("ramjet_origin_retries_total"),
		refreshes:         s.NewCounter("ramjet_background_refreshes_total"),
		gapStale:          s.NewCounter("ramjet_purge_gap_stale_objects_total"),
		gapRefreshes:      s.NewCounter("ramjet_purge_gap_refreshes_total"),
		reloads:           s.NewCounter(`ramjet_reloads_total{result="ok"}`),
		reloadErrors:      s.NewCounter(`ramjet_reloads_total{result="error"}`),
		badPurgeHeaders:   s.NewCounter("ramjet_purge_header_errors_total"),
		phpBusy:           s.NewCounter(`ramjet_origin_errors_total{kind="php_busy"}`),
		originBusy:        s.NewCounter(`ramjet_origin_errors_total{kind="busy"}`),
		crawlerRefused:    s.NewCounter("ramjet_crawler_refused_total"),
		warm:              newWarmMetrics(s),
		waf:               newWAFMetrics(s),
	}
	s.NewGauge("ramjet_cache_objects", func() float64 { return float64(c.Len()) })
	s.NewGauge("ramjet_cache_bytes", func() float64 { return float64(c.Bytes()) })
	s.NewGauge("ramjet_cache_variants_dropped_total", func() float64 { return float64(c.VariantsDropped()) })
	return m
}

// Set is the metric set, for other components to register in.
func (m *Metrics) Set() *metrics.Set { return m.set }

// Reloaded counts a configuration reload by its outcome.
func (m *Metrics) Reloaded(err error) {
	if err != nil {
		m.reloadErrors.Inc()
		return
	}
	m.reloads.Inc()
}

// WritePrometheus writes the proxy's metrics and the process's in the
// Prometheus text format.
func (m *Metrics) WritePrometheus(w io.Writer) {
	m.set.WritePrometheus(w)
	if m.more != nil {
		m.more(w)
	}
	metrics.WriteProcessMetrics(w)
}

// wafMetrics count what the WAF did. Matches are counted by rule for
// the requests it stopped (or would have, in detect mode), with at most
// maxRuleSeries rules named: the CRS has a few hundred, a site's own
// files could have any number.
type wafMetrics struct {
	set                               *metrics.Set
	passed, detected, blocked         *metrics.Counter
	responseDetected, responseBlocked *metrics.Counter
	allowed, static                   *metrics.Counter
	bodyUninspected, bodyRejected     *metrics.Counter
	mu                                sync.Mutex      // guards ruleSeries
	ruleSeries                        map[string]bool // "rule outcome" series made
}

const maxRuleSeries = 512

func newWAFMetrics(s *metrics.Set) wafMetrics {
	return wafMetrics{
		set:              s,
		passed:           s.NewCounter(`ramjet_waf_requests_total{outcome="passed"}`),
		detected:         s.NewCounter(`ramjet_waf_requests_total{outcome="detected"}`),
		blocked:          s.NewCounter(`ramjet_waf_requests_total{outcome="blocked"}`),
		responseDetected: s.NewCounter(`ramjet_waf_responses_total{outcome="detected"}`),
		responseBlocked:  s.NewCounter(`ramjet_waf_responses_total{outcome="blocked"}`),
		allowed:          s.NewCounter(`ramjet_waf_skipped_total{reason="allow"}`),
		static:           s.NewCounter(`ramjet_waf_skipped_total{reason="static"}`),
		bodyUninspected:  s.NewCounter(`ramjet_waf_body_total{outcome="uninspected"}`),
		bodyRejected:     s.NewCounter(`ramjet_waf_body_total{outcome="rejected"}`),
		ruleSeries:       map[string]bool{},
	}
}

// countRules counts each rule that matched in a stopped request.
func (m *wafMetrics) countRules(v *waf.Verdict, outcome string) {
	for _, x := range v.Matches {
		rule := strconv.Itoa(x.ID)
		m.mu.Lock()
		if !m.ruleSeries[rule+" "+outcome] {
			if len(m.ruleSeries) >= maxRuleSeries {
				rule = "other"
			}
			m.ruleSeries[rule+" "+outcome] = true
		}
		m.mu.Unlock()
		m.set.GetOrCreateCounter(`ramjet_waf_rule_matches_total{rule="` + rule + `",outcome="` + outcome + `"}`).Inc()
	}
}
