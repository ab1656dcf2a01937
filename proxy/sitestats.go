package proxy

import (
	"bytes"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ramjet-proxy/ramjet/proxy/sitestats"
)

// What a site's owner reads about its cache (package sitestats): the
// site's counters over the last minute, hour and day, read from its
// Prometheus series once a second, and the URLs it answered uncached.
// The request path only increments counters; a request answered from
// the cache stops at the first test of stageStats.

// siteCounters are the per-site series besides those of sitestate.go
// that the history reads: every answered client request, the 5xx
// answers, and the upstream's share.
type siteCounters struct {
	requests, errors, origin *metrics.Counter
	originSeconds            *metrics.FloatCounter
}

// addStats registers st's stats series (series names them, for
// unregister) and starts its history.
func (st *siteState) addStats(set *metrics.Set, series func(string) string, cfg sitestats.Config) {
	st.requests = set.NewCounter(series("ramjet_site_requests_total"))
	st.errors = set.NewCounter(series("ramjet_site_errors_total"))
	st.origin = set.NewCounter(series("ramjet_site_origin_requests_total"))
	st.originSeconds = set.NewFloatCounter(series("ramjet_site_origin_seconds_total"))
	st.stats = sitestats.New(cfg, st.counts, time.Now())
}

// counts reads st's counters.
func (st *siteState) counts() sitestats.Counts {
	return sitestats.Counts{
		Requests: st.requests.Get(), Hits: st.hits.Get(), Misses: st.misses.Get(), Passes: st.passes.Get(),
		Purges: st.purges.Get(), WAFBlocked: st.wafBlocked.Get(), Errors: st.errors.Get(),
		Origin: st.origin.Get(), OriginTime: time.Duration(st.originSeconds.Get() * float64(time.Second)),
	}
}

// stageStats counts a client's answered request in its site's series and,
// when it went upstream uncached or the WAF stopped it, its URL in the
// site's list with the reason. Fragments are part of their page's
// request: they do not run it. It runs for every answered request,
// after respond.
func stageStats(r *request) verdict {
	if r.s == nil || r.s.state == nil {
		return proceed
	}
	st := r.s.state
	st.requests.Inc()
	if r.res.hit {
		return proceed // the cache answered: nothing more to count
	}
	if r.ctx.Response.StatusCode() >= 500 {
		st.errors.Inc()
	}
	if r.res.origin > 0 {
		st.origin.Inc()
		st.originSeconds.Add(float64(r.res.origin) / float64(time.Second))
	}
	if reason := r.uncachedReason(); reason != nil {
		st.stats.Uncached(r.scheme(), r.header().Host(), r.header().RequestURI(), reason, time.Now())
	}
	return proceed
}

var (
	reasonWAF = []byte("waf")
	schemes   = [2][]byte{[]byte("http://"), []byte("https://")}
)

// scheme is the request's scheme as a URL starts with it.
func (r *request) scheme() []byte {
	if r.tls {
		return schemes[1]
	}
	return schemes[0]
}

// uncachedReason is why the request was answered uncached: "waf" when
// the WAF stopped it, else what its Cache-Status says (the detail, or
// the forward reason without one); nil for an answer the cache gave or
// stored, and for one that never reached the cache's decision (a
// refusal, a redirect: no fwd).
func (r *request) uncachedReason() []byte {
	if r.waf.outcome == wafBlocked {
		return reasonWAF
	}
	return uncachedReason(r.ctx.Response.Header.PeekBytes(hdrCacheStatus))
}

// uncachedReason reads a Cache-Status of ramjet's making (serve.go).
func uncachedReason(cs []byte) []byte {
	var fwd, detail []byte
	for len(cs) > 0 {
		var p []byte
		p, cs, _ = bytes.Cut(cs, []byte(";"))
		p = bytes.TrimSpace(p)
		switch {
		case bytes.Equal(p, []byte("hit")), bytes.Equal(p, []byte("stored")), bytes.Equal(p, []byte("collapsed")),
			bytes.HasPrefix(p, []byte("fwd-status=")):
			return nil // answered from the cache, or stored
		case bytes.HasPrefix(p, []byte("fwd=")):
			fwd = p[len("fwd="):]
		case bytes.HasPrefix(p, []byte("detail=")):
			detail = p[len("detail="):]
		}
	}
	switch {
	case fwd == nil:
		return nil
	case detail != nil:
		return detail
	}
	return fwd
}

// sample snapshots every site's counters at now.
func (ss *siteStates) sample(now time.Time) {
	ss.mu.Lock()
	states := make([]*siteState, 0, len(ss.m))
	for _, st := range ss.m {
		states = append(states, st)
	}
	ss.mu.Unlock()
	for _, st := range states {
		st.stats.Sample(now)
	}
}

// resizeStats applies cfg's bound to every site's URL list.
func (ss *siteStates) resizeStats(cfg sitestats.Config) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.stats = cfg
	for _, st := range ss.m {
		st.stats.Resize(cfg)
	}
}

// startSampling snapshots the sites' counters every second until Close.
// It is not one of p.bg's background refreshes: tests and Close wait for
// those to finish, and the sampler runs until the proxy stops.
func (p *Proxy) startSampling() {
	p.sampling.Add(1)
	go func() {
		defer p.sampling.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case now := <-t.C:
				p.sites.sample(now)
			}
		}
	}()
}

// SiteStats is one site's numbers for its owner.
type SiteStats struct {
	// Site is the site's scope (its first host name; its purge scope),
	// or "_default" for the hosts no hosts[] entry names.
	Site string
	// Entries and Bytes are what it has in the cache now.
	Entries, Bytes int64
	History        *sitestats.Site
}

func (st *siteState) view() SiteStats {
	return SiteStats{Site: st.label, Entries: st.tally.Entries(), Bytes: st.tally.Bytes(), History: st.stats}
}

// SiteStatsOf is the stats of the site whose scope is scope (ScopeOf);
// false when no configured site has it.
func (p *Proxy) SiteStatsOf(scope string) (SiteStats, bool) {
	st := p.sites.lookup(scopeLabel(scope))
	if st == nil {
		return SiteStats{}, false
	}
	return st.view(), true
}

// AllSiteStats lists every site's stats, the default site's included.
func (p *Proxy) AllSiteStats() []SiteStats {
	p.sites.mu.Lock()
	defer p.sites.mu.Unlock()
	out := make([]SiteStats, 0, len(p.sites.m))
	for _, st := range p.sites.m {
		out = append(out, st.view())
	}
	return out
}
