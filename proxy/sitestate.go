package proxy

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/sitestats"
)

// What a configured site keeps across reloads: its counters (a reload
// must not reset a Prometheus counter) and, with a cache_size, its own
// cache, so one site's crawl evicts only its own pages, as a Varnish
// storage backend per site would. Sites without a share use the shared
// cache; a Tally still counts their entries there. The series are one set
// per configured site plus one for every host no entry names, so their
// number is bounded by the config.

// defaultSiteLabel labels the hosts no hosts[] entry names.
const defaultSiteLabel = "_default"

// siteState is one site's long-lived part.
type siteState struct {
	label string
	tally cache.Tally
	// share is the site's own cache; nil: the shared one.
	share     *cache.Cache
	shareSize int64
	hits      *metrics.Counter // answered from the cache (fresh, stale, private)
	misses    *metrics.Counter // fetched to be stored
	passes    *metrics.Counter // forwarded uncached
	purges    *metrics.Counter // purge commands scoped to the site
	// wafBlocked and wafDetected count the requests and responses the
	// WAF stopped (block mode) or would have (detect mode) on the site.
	wafBlocked, wafDetected *metrics.Counter
	// crawlerRefused counts the crawler requests its budget refused;
	// crawlerUpstream is how many are upstream now, across reloads.
	crawlerRefused  *metrics.Counter
	crawlerUpstream atomic.Int32
	// siteCounters and stats are what its owner reads (sitestats.go).
	siteCounters
	stats *sitestats.Site
	// warm is the site's warm-up after purges (warmup.go).
	warm warmState
	// series are the names of the metric series add registered, which
	// unregister drops: the list is written once.
	series []string
}

// siteStates holds every site's state by label.
type siteStates struct {
	mu  sync.Mutex // guards m
	m   map[string]*siteState
	set *metrics.Set
	// newShare makes a site's own cache (Stores.NewShare).
	newShare func(label string, size int64) (*cache.Cache, error)
	stats    sitestats.Config // the current bounds of new states' stats; guarded by mu
}

func newSiteStates(set *metrics.Set, newShare func(string, int64) (*cache.Cache, error)) *siteStates {
	if newShare == nil {
		newShare = func(_ string, size int64) (*cache.Cache, error) { return cache.New(cache.Config{Size: size}) }
	}
	return &siteStates{m: map[string]*siteState{}, set: set, newShare: newShare}
}

// siteLabel is the label of a compiled site's series.
func siteLabel(s *site) string {
	if s.scope == "" {
		return defaultSiteLabel
	}
	return scopeLabel(s.scope)
}

// scopeLabel is the label of a configured site's scope.
func scopeLabel(scope string) string {
	return strings.NewReplacer(`"`, "_", `\`, "_", "\n", "_").Replace(scope)
}

// ofScope is the state purges of scope count in: the configured site's,
// or the default site's for a host no entry names.
func (ss *siteStates) ofScope(scope string) *siteState {
	if st := ss.lookup(scopeLabel(scope)); st != nil {
		return st
	}
	return ss.get(defaultSiteLabel)
}

// get returns the state of label, registering its series on first use.
func (ss *siteStates) get(label string) *siteState {
	st, _ := ss.add(label)
	return st
}

// add is get that also reports whether the state is new.
func (ss *siteStates) add(label string) (*siteState, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if st, ok := ss.m[label]; ok {
		return st, false
	}
	st := &siteState{label: label}
	series := func(name string) string {
		s := fmt.Sprintf(`%s{site=%q}`, name, label)
		st.series = append(st.series, s)
		return s
	}
	c := func(name string) *metrics.Counter { return ss.set.NewCounter(series(name)) }
	st.hits, st.misses = c("ramjet_site_hits_total"), c("ramjet_site_misses_total")
	st.passes, st.purges = c("ramjet_site_passes_total"), c("ramjet_site_purges_total")
	st.wafBlocked, st.wafDetected = c("ramjet_site_waf_blocked_total"), c("ramjet_site_waf_detected_total")
	st.crawlerRefused = c("ramjet_site_crawler_refused_total")
	st.warm.counters = newSiteWarmCounters(c)
	st.addStats(ss.set, series, ss.stats)
	ss.set.NewGauge(series("ramjet_site_cache_objects"), func() float64 { return float64(st.tally.Entries()) })
	ss.set.NewGauge(series("ramjet_site_cache_bytes"), func() float64 { return float64(st.tally.Bytes()) })
	ss.m[label] = st
	return st, true
}

// lookup returns the state of label, or nil.
func (ss *siteStates) lookup(label string) *siteState {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.m[label]
}

// bind gives s its state and its cache: its share (kept from before, or
// new and listed in m.shares until commit), else shared. A state it
// registers is listed in m.states, for forget.
func (ss *siteStates) bind(s *site, shared *cache.Cache, m *made) error {
	st, added := ss.add(siteLabel(s))
	if added {
		m.states = append(m.states, st.label)
	}
	s.state, s.cache = st, shared
	if s.crawler != nil { // a reload must not hand the crawler a fresh budget
		s.crawler.upstream = &st.crawlerUpstream
	}
	if s.CacheSize <= 0 {
		return nil
	}
	if st.share != nil {
		s.cache = st.share
		return nil
	}
	c, err := ss.newShare(st.label, s.CacheSize)
	if err != nil {
		return fmt.Errorf("proxy: site %s: cache_size: %w", st.label, err)
	}
	if m.shares == nil {
		m.shares = map[*siteState]*cache.Cache{}
	}
	m.shares[st], s.cache = c, c
	return nil
}

// forget drops the states of labels, registered by a generation that
// never served, with their series.
func (ss *siteStates) forget(labels []string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, label := range labels {
		if st := ss.m[label]; st != nil {
			delete(ss.m, label)
			ss.unregister(st)
		}
	}
}

// commit makes g's sites the configured ones, once g serves: new shares
// are kept, changed sizes applied, and the states of sites g no longer
// has dropped with their series. It returns the shares no site uses any
// more, to close once the old generation has drained.
func (ss *siteStates) commit(g *generation) []*cache.Cache {
	want := map[*siteState]int64{}
	for _, s := range g.router.sites() {
		want[s.state] = max(s.CacheSize, 0)
	}
	ss.resizeStats(g.cfg.Stats)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var gone []*cache.Cache
	for label, st := range ss.m {
		size, kept := want[st]
		if c := g.made.shares[st]; c != nil {
			st.share, st.shareSize = c, size
		}
		switch {
		case st.share != nil && size == 0:
			gone = append(gone, st.share)
			st.share, st.shareSize = nil, 0
		case st.share != nil && size != st.shareSize:
			_ = st.share.Resize(size) // positive: conf checked it
			st.shareSize = size
		}
		if !kept {
			delete(ss.m, label)
			ss.unregister(st)
		}
	}
	return gone
}

// unregister drops the series st registered (add).
func (ss *siteStates) unregister(st *siteState) {
	for _, s := range st.series {
		ss.set.UnregisterMetric(s)
	}
}

// shares lists every site's own cache.
func (ss *siteStates) shares() []*cache.Cache {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []*cache.Cache
	for _, st := range ss.m {
		if st.share != nil {
			out = append(out, st.share)
		}
	}
	return out
}
