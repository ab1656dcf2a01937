package proxy

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/purge"
)

// After a purge, the next visitor of each page it dropped waits for the
// origin, and a purge of everything sends every visitor there at once.
// Varnish's xkey refused to refetch after a purge for fear of that very
// herd; ramjet knows which of the dropped pages were asked for (each
// entry's Popularity, counted on the hit path), so it fetches the most
// requested of them again in the background, most requested first,
// within the site's Warm budget and only while the site's upstream has
// capacity to spare: it pauses the moment visitors need it. Pages a soft
// purge made stale are refreshed the same way, with their validators.
//
// A purge that drops pages at once (a URL, a prefix, everything) tells
// the warm-up what it dropped (cache.OnDrop); one by tag is O(1) and
// drops nothing until the pages are looked up, so a scan off the purge's
// path finds them afterwards (cache.InvalidatedSince). Each site keeps
// its best MaxEntries candidates (warmList) and one run at a time works
// them off.
//
// Only what a request made up from the key alone gets again is fetched:
// pages of proxied sites whose .htaccess rules ramjet does not apply
// (those and docroot sites depend on the visitor's request), in variants
// selected by request headers that carry no credentials, never by a
// cookie: the upstream never sees one visitor's cookies or
// Authorization on another's behalf.

// Warm is a site's warm-up after purges; nil: none.
type Warm struct {
	// Concurrency bounds the site's warm-up requests upstream at once.
	Concurrency int
	// Rate bounds the warm-up requests started per second.
	Rate float64
	// MaxEntries bounds the candidates kept per site: the most requested
	// of what purges dropped.
	MaxEntries int
	// MaxBusy is the percentage of the upstream's capacity in use,
	// visitors' waiting requests counted, from which the warm-up waits
	// (the crawler's test, crawler.go).
	MaxBusy int
}

// Pacing of a warm run: how long it waits for the upstream to have
// capacity to spare between looks, and for how long in all before it
// leaves the rest of its candidates to their visitors.
const (
	warmYield  = 20 * time.Millisecond
	warmGiveUp = 30 * time.Second
)

// warmState is a site's warm-up across reloads: its candidates and
// whether a run works them off.
type warmState struct {
	mu      sync.Mutex // guards list, running
	list    warmList
	running bool
	// counters are the site's share of warmMetrics.
	counters siteWarmCounters
	// gapInFlight counts a docroot site's gap refreshes (gapwarm.go).
	gapInFlight atomic.Int32
}

// warmer is the proxy's part of the warm-up: purges in progress whose
// drops are wanted, what they dropped, and the scans due after purges
// by tag.
type warmer struct {
	active atomic.Int32 // purges between warmBefore and warmAfter
	mu     sync.Mutex   // guards staged, scans, scanning
	// staged are the drops of purges not yet applied whole (a run must
	// not fetch a page again before the purge is over), per site.
	staged map[*siteState]*warmList
	// scans are the caches to scan for what purges by tag invalidated,
	// from when; scanning: a scan goroutine runs.
	scans    map[*cache.Cache]int64
	scanning bool
}

// warmPurge is what warmBefore learnt of a purge for warmAfter.
type warmPurge struct {
	caches []*cache.Cache
	since  []int64 // per cache: its clock before the purge
	lazy   bool    // the purge leaves invalidated entries in place
}

// warmBefore prepares the warm-up of what cmd is about to purge: nil
// when no site warms (or cmd is a user's private purge, or a gap, which
// gapwarm.go warms). Drops are observed until warmAfter.
func (p *Proxy) warmBefore(cmd purge.Command) *warmPurge {
	if cmd.Private || cmd.Gap || !warms(p.gen.Load()) {
		return nil
	}
	wp := &warmPurge{caches: p.publicCaches(cmd.Site), lazy: lazyPurge(cmd)}
	for _, c := range wp.caches {
		since := c.Now()
		if cmd.Before != 0 {
			since = min(since, cmd.Before)
		}
		wp.since = append(wp.since, since)
		c.OnDrop(p.warmDropped(c))
	}
	p.warm.active.Add(1)
	return wp
}

// warmAfter starts the warm-up of what the purge wp prepared dropped:
// the runs of the sites it dropped pages of, and a scan for what it
// invalidated in place.
func (p *Proxy) warmAfter(wp *warmPurge) {
	if wp == nil {
		return
	}
	p.warm.mu.Lock()
	// Only the last purge to end takes the drops: another one's still in
	// progress may have staged some of its own (drops are not told apart
	// by purge). Decremented under mu, so that a purge that starts after
	// stages its drops for a later warmAfter.
	var staged map[*siteState]*warmList
	if p.warm.active.Add(-1) == 0 {
		staged = p.warm.staged
		p.warm.staged = nil
	}
	if wp.lazy {
		if p.warm.scans == nil {
			p.warm.scans = map[*cache.Cache]int64{}
		}
		for i, c := range wp.caches {
			if at, ok := p.warm.scans[c]; !ok || wp.since[i] < at {
				p.warm.scans[c] = wp.since[i]
			}
		}
	}
	scan := wp.lazy && !p.warm.scanning
	p.warm.scanning = p.warm.scanning || scan
	p.warm.mu.Unlock()
	for st, l := range staged {
		dropped := l.dropped
		st.warm.mu.Lock()
		st.warm.list.max = l.max
		for c, ok := l.pop(); ok; c, ok = l.pop() {
			if !st.warm.list.add(c) {
				dropped++
			}
		}
		st.warm.mu.Unlock()
		p.metrics.warm.dropped.Add(dropped)
		p.startWarmRun(st)
	}
	if scan && p.startBackground() {
		go p.warmScans()
	} else if scan {
		p.warm.mu.Lock()
		p.warm.scanning = false
		p.warm.mu.Unlock()
	}
}

// lazyPurge reports whether cmd purges in place what it purges: by tag,
// or everything softly, of one site, or as of an earlier time.
func lazyPurge(cmd purge.Command) bool {
	for _, t := range cmd.Targets {
		switch t.Kind {
		case purge.KindTag, purge.KindTagPrefix, purge.KindTagSuffix:
			return true
		case purge.KindAll:
			if t.Soft || cmd.Site != "" || cmd.Before != 0 {
				return true
			}
		}
	}
	return false
}

// warms reports whether a site of g warms after purges.
func warms(g *generation) bool {
	for _, s := range g.router.sites() {
		if s.Warm != nil {
			return true
		}
	}
	return false
}

// warmDropped is c's drop observer: during a purge that warms, the
// pages it drops become candidates of their sites.
func (p *Proxy) warmDropped(c *cache.Cache) func(uint64, *cache.Object) {
	return func(_ uint64, o *cache.Object) {
		if p.warm.active.Load() == 0 {
			return
		}
		now := c.Now()
		pick := func(e *cache.Entry) bool { return !e.Expired(now) }
		p.offerWarm(c, o, pick, func(st *siteState, s *site, wc warmCandidate) {
			p.warm.mu.Lock()
			defer p.warm.mu.Unlock()
			if p.warm.staged == nil {
				p.warm.staged = map[*siteState]*warmList{}
			}
			l := p.warm.staged[st]
			if l == nil {
				l = &warmList{max: s.Warm.MaxEntries}
				p.warm.staged[st] = l
			}
			l.add(wc)
		}, now)
	}
}

// warmScans scans the caches purges by tag left entries invalidated in,
// until none is due, and starts the runs of the sites it found pages of.
func (p *Proxy) warmScans() {
	defer p.bg.Done()
	for {
		p.warm.mu.Lock()
		scans := p.warm.scans
		p.warm.scans = nil
		if len(scans) == 0 {
			p.warm.scanning = false
			p.warm.mu.Unlock()
			return
		}
		p.warm.mu.Unlock()
		found := map[*siteState]bool{}
		for c, since := range scans {
			p.scanInvalidated(c, since, found)
		}
		for st := range found {
			p.startWarmRun(st)
		}
	}
}

// scanInvalidated offers the entries of c a purge since then dropped or
// made stale and that could still be served, noting their sites in found.
func (p *Proxy) scanInvalidated(c *cache.Cache, since int64, found map[*siteState]bool) {
	now := c.Now()
	pick := func(e *cache.Entry) bool { return !e.Expired(now) && c.InvalidatedSince(e, since) }
	for _, o := range c.All() {
		select {
		case <-p.stop:
			return
		default:
		}
		p.offerWarm(c, o, pick, func(st *siteState, s *site, wc warmCandidate) {
			st.warm.mu.Lock()
			defer st.warm.mu.Unlock()
			st.warm.list.max = s.Warm.MaxEntries
			if !st.warm.list.add(wc) {
				p.metrics.warm.dropped.Inc()
			}
			found[st] = true
		}, now)
	}
}

// offerWarm gives add the variants of o, stored in c, that pick accepts
// and its site may warm, with their popularity at now; nobody asked for
// lately (score 0) is left to its visitors.
func (p *Proxy) offerWarm(c *cache.Cache, o *cache.Object, pick func(*cache.Entry) bool,
	add func(*siteState, *site, warmCandidate), now int64) {
	host, ok := keyHost(o.Key)
	if !ok || o.PassUntil != 0 {
		return
	}
	s := p.gen.Load().router.route([]byte(host))
	if !warmsIn(s, c) {
		return
	}
	for _, e := range o.Variants {
		score := e.Popularity().Score(now)
		if score == 0 || !pick(e) || !plainRequest(&o.Vary, e.Variant) {
			continue
		}
		p.metrics.warm.candidates.Inc()
		s.state.warm.counters.candidates.Inc()
		add(s.state, s, warmCandidate{key: o.Key, vary: o.Vary, variant: e.Variant, score: score, pop: e.Popularity()})
	}
}

// warmsIn reports whether s warms its pages stored in c: a site with a
// Warm budget whose cache c is. Docroot sites and sites with .htaccess
// rules are warmed too: their warm fetch takes the visitor's stages
// (warmfetch.go).
func warmsIn(s *site, c *cache.Cache) bool {
	return s.Warm != nil && s.cache == c
}

// keyHost is the host of a page's key "scheme://host/…"; false for any
// other key (an ESI inline's).
func keyHost(key string) (string, bool) {
	scheme, rest, ok := strings.Cut(key, "://")
	host, _, _ := strings.Cut(rest, "/")
	return host, ok && (scheme == "http" || scheme == "https") && host != ""
}

// credentialFields are request fields a variant may be selected by that
// are one client's credentials: never sent on a visitor's behalf.
var credentialFields = []string{"authorization", "proxy-authorization", "cookie"}

// plainRequest reports whether the variant (values serialised by
// appendVariant) is one a request without credentials selects: no
// cookie value, no credential field.
func plainRequest(vary *cache.VarySpec, variant string) bool {
	values := strings.Split(variant, "\x00")
	n := len(vary.Headers) + len(vary.Cookies)
	if n == 0 {
		return variant == ""
	}
	if len(values) != n+1 || values[n] != "" {
		return false
	}
	for i, name := range vary.Headers {
		if values[i] != "" && (name == varyValueKey || containsFold(credentialFields, name)) {
			return false
		}
	}
	for _, v := range values[len(vary.Headers):n] {
		if v != "" {
			return false
		}
	}
	return true
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// warmMetrics count what the warm-up after purges did, over all sites.
type warmMetrics struct {
	// candidates: pages offered; dropped: left out for want of room
	// (MaxEntries); abandoned: left to their visitors when a run gave
	// up (no capacity to spare for warmGiveUp, the site's warm-up off).
	candidates, dropped, abandoned *metrics.Counter
	// fetches started; skipped (fresh again, being filled, or made
	// another page by the site's rules, when their turn came); refused
	// (the site's .htaccess rules refused, redirected or bypassed the
	// made-up request: never fetched); failures (not stored).
	fetches, skipped, refused, failures *metrics.Counter
	// yields: waits for the upstream to have capacity to spare.
	yields, runs *metrics.Counter
}

func newWarmMetrics(s *metrics.Set) warmMetrics {
	return warmMetrics{
		candidates: s.NewCounter("ramjet_warm_candidates_total"),
		dropped:    s.NewCounter("ramjet_warm_dropped_total"),
		abandoned:  s.NewCounter("ramjet_warm_abandoned_total"),
		fetches:    s.NewCounter("ramjet_warm_fetches_total"),
		skipped:    s.NewCounter("ramjet_warm_skipped_total"),
		refused:    s.NewCounter("ramjet_warm_refused_total"),
		failures:   s.NewCounter("ramjet_warm_failures_total"),
		yields:     s.NewCounter("ramjet_warm_yields_total"),
		runs:       s.NewCounter("ramjet_warm_runs_total"),
	}
}

// siteWarmCounters are one configured site's warm-up counters
// (ramjet_site_warm_*_total{site=…}): their label is the site's, from
// the config, never anything a client sent.
type siteWarmCounters struct {
	candidates, fetches, skipped, refused, failures *metrics.Counter
	abandoned, yields, runs                         *metrics.Counter
}

// newSiteWarmCounters registers a site's warm-up counters with c, which
// makes a counter of the site's series of name.
func newSiteWarmCounters(c func(name string) *metrics.Counter) siteWarmCounters {
	return siteWarmCounters{
		candidates: c("ramjet_site_warm_candidates_total"),
		fetches:    c("ramjet_site_warm_fetches_total"),
		skipped:    c("ramjet_site_warm_skipped_total"),
		refused:    c("ramjet_site_warm_refused_total"),
		failures:   c("ramjet_site_warm_failures_total"),
		abandoned:  c("ramjet_site_warm_abandoned_total"),
		yields:     c("ramjet_site_warm_yields_total"),
		runs:       c("ramjet_site_warm_runs_total"),
	}
}
