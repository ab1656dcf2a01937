package proxy

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// A warm run works off one site's candidates, most popular first, each
// start waiting for a slot of Concurrency, for the Rate's next turn and
// for the upstream to have capacity to spare (Warm.MaxBusy), in that
// order. It ends when the list is empty, and logs what it did.

// warmStats is what a run did.
type warmStats struct {
	refetched, revalidated, skipped, refused, failed, abandoned, yields atomic.Int64
}

// startWarmRun starts st's run unless one runs or st has no candidates.
func (p *Proxy) startWarmRun(st *siteState) {
	st.warm.mu.Lock()
	start := !st.warm.running && st.warm.list.len() > 0
	st.warm.running = st.warm.running || start
	st.warm.mu.Unlock()
	if !start {
		return
	}
	if !p.startBackground() {
		st.warm.mu.Lock()
		st.warm.running = false
		st.warm.mu.Unlock()
		return
	}
	go p.warmRun(st)
}

// warmRun works off st's candidates; a run of its own each time more
// came while the last one finished.
func (p *Proxy) warmRun(st *siteState) {
	defer p.bg.Done()
	for {
		began := time.Now()
		var stats warmStats
		p.warmWork(st, &stats)
		p.metrics.warm.runs.Inc()
		st.warm.counters.runs.Inc()
		p.log.Info("warm run", "site", st.label, "refetched", stats.refetched.Load(),
			"revalidated", stats.revalidated.Load(), "skipped", stats.skipped.Load(), "refused", stats.refused.Load(),
			"failed", stats.failed.Load(), "abandoned", stats.abandoned.Load(),
			"yields", stats.yields.Load(), "took", time.Since(began).Round(time.Millisecond))
		st.warm.mu.Lock()
		again := st.warm.list.len() > 0 && !p.stopping()
		st.warm.running = again
		st.warm.mu.Unlock()
		if !again {
			return
		}
	}
}

// warmWork fetches st's candidates again until none is left, the site
// no longer warms, the upstream had no capacity to spare for warmGiveUp,
// or the proxy stops; every fetch it started has ended when it returns.
func (p *Proxy) warmWork(st *siteState, stats *warmStats) {
	var wg sync.WaitGroup
	defer wg.Wait()
	var (
		sem  chan struct{}
		next time.Time
	)
	for {
		s := p.warmSite(st)
		if s == nil {
			stats.abandoned.Add(int64(p.dropWarm(st)))
			return
		}
		if sem == nil { // a reload's new Concurrency applies from the next run
			sem = make(chan struct{}, s.Warm.Concurrency)
		}
		select {
		case sem <- struct{}{}:
		case <-p.stop:
			return
		}
		if !p.warmPause(time.Until(next)) || !p.warmSpare(s, stats) {
			<-sem
			stats.abandoned.Add(int64(p.dropWarm(st)))
			return
		}
		st.warm.mu.Lock()
		c, ok := st.warm.list.pop()
		st.warm.mu.Unlock()
		if !ok {
			<-sem
			return
		}
		if now := time.Now(); now.After(next) {
			next = now
		}
		next = next.Add(time.Duration(float64(time.Second) / s.Warm.Rate))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			p.warmFetch(st, c, stats)
		}()
	}
}

// warmSite is the site st belongs to now, if it still warms; nil when a
// reload removed it or turned its warm-up off.
func (p *Proxy) warmSite(st *siteState) *site {
	for _, s := range p.gen.Load().router.sites() {
		if s.state == st && s.Warm != nil {
			return s
		}
	}
	return nil
}

// dropWarm empties st's candidates, left to their visitors, and reports
// how many there were.
func (p *Proxy) dropWarm(st *siteState) int {
	st.warm.mu.Lock()
	defer st.warm.mu.Unlock()
	n := st.warm.list.len()
	st.warm.list = warmList{max: st.warm.list.max}
	p.metrics.warm.abandoned.Add(n)
	st.warm.counters.abandoned.Add(n)
	return n
}

// warmPause waits d; false when the proxy stops meanwhile.
func (p *Proxy) warmPause(d time.Duration) bool {
	if d <= 0 {
		return !p.stopping()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.stop:
		return false
	}
}

// warmSpare waits until s's upstream has capacity to spare: false when
// it had none for warmGiveUp, or the proxy stops.
func (p *Proxy) warmSpare(s *site, stats *warmStats) bool {
	for waited := time.Duration(0); !spare(s.gauge, s.Warm.MaxBusy); waited += warmYield {
		stats.yields.Add(1)
		p.metrics.warm.yields.Inc()
		s.state.warm.counters.yields.Inc()
		if waited >= warmGiveUp || !p.warmPause(warmYield) {
			return false
		}
	}
	return true
}

func (p *Proxy) stopping() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// warmFetch fetches c again as a visitor's request of it would be
// (runWarm: through the site's rules, and its PHP for a docroot site),
// unless its site is no longer st (a reload moved its host), a visitor
// has it fresh again, or another fill of it runs. A copy a soft purge
// left stale is revalidated.
func (p *Proxy) warmFetch(st *siteState, c warmCandidate, stats *warmStats) {
	host, _ := keyHost(c.key)
	g := p.enter()
	defer g.leave()
	s := g.router.route([]byte(host))
	if s.state != st || s.Warm == nil {
		p.warmSkipped(st, stats)
		return
	}
	switch p.runWarm(c) {
	case warmRefetched:
		stats.refetched.Add(1)
	case warmRevalidated:
		stats.revalidated.Add(1)
	case warmSkippedOne:
		p.warmSkipped(st, stats)
	case warmRefused:
		stats.refused.Add(1)
		p.metrics.warm.refused.Inc()
		st.warm.counters.refused.Inc()
	case warmFailed, warmNotStored:
		stats.failed.Add(1)
		p.metrics.warm.failures.Inc()
		st.warm.counters.failures.Inc()
	}
}

// warmSkipped counts a candidate left alone: fresh again, being filled,
// or no longer its site's to warm.
func (p *Proxy) warmSkipped(st *siteState, stats *warmStats) {
	stats.skipped.Add(1)
	p.metrics.warm.skipped.Inc()
	st.warm.counters.skipped.Inc()
}

// warmCopy looks c up in ch: the stale copy to revalidate, or whether
// it is fresh already (then also returned as the entry).
func warmCopy(ch *cache.Cache, h uint64, c warmCandidate) (stale *cache.Entry, fresh *cache.Entry) {
	o := ch.Lookup(h, []byte(c.key))
	if o == nil || o.PassUntil != 0 {
		return nil, nil
	}
	for _, e := range o.Variants {
		if e.Variant != c.variant {
			continue
		}
		switch ch.Status(e, ch.Now()) {
		case cache.Fresh:
			return nil, e
		case cache.Stale:
			return e, nil
		}
	}
	return nil, nil
}
