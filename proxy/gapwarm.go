package proxy

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// A fan-out gap (cache/gap.go) leaves every page stale for its grace, then
// gone: a page nobody asked for meanwhile would be fetched again by its
// next visitor, who gets an error if the origin is down just then — for a
// page ramjet had. So a gap also warms what it left stale: each plain page
// (the variant a request of its URL alone selects) of a proxied site is
// refreshed in the background, as a visitor's stale hit would refresh it,
// at most maxGapRefreshes at a time (the visitors' refreshes share the
// bound), coalesced with any refresh of the same page, and tried again
// every gapRetry while the origin fails, until the grace is over. Each
// refresh is a request ramjet makes up (warmfetch.go) through the
// visitor's stages: the site's .htaccess rules refuse, redirect or vary
// it as a visitor's, and a docroot site's PHP runs it, within its pool's
// spare capacity. Variants chosen by cookies or other request fields are
// refreshed by their visitors only: a request made up from the key would
// not be theirs.

// gapRetry is how long the warm-up waits before trying the pages whose
// refresh failed again.
const gapRetry = 500 * time.Millisecond

// warmGap starts the warm-up of what a gap of grace left stale in c; the
// Proxy's Close waits for it.
func (p *Proxy) warmGap(c *cache.Cache, grace time.Duration) {
	if !p.startBackground() {
		return
	}
	until := time.Now().Add(grace)
	done := &gapDone{m: map[uint64]bool{}}
	go func() {
		defer p.bg.Done()
		for time.Now().Before(until) {
			tried, failed := p.warmGapOnce(c, done)
			if tried == 0 {
				return // nothing of before the gap is left stale
			}
			if !failed {
				// Pages the pass met in neither tier (RAM and the disk
				// traded them meanwhile) are met by the next one.
				continue
			}
			t := time.NewTimer(min(gapRetry, time.Until(until)))
			select {
			case <-t.C:
			case <-p.stop:
				t.Stop()
				return
			}
		}
	}()
}

// gapDone holds the pages a gap's warm-up refreshed or gave up on
// (refused by the rules, not stored): a later pass does not try them
// again, only those that failed or that it had not met.
type gapDone struct {
	mu sync.Mutex
	m  map[uint64]bool
}

func (d *gapDone) has(h uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.m[h]
}

func (d *gapDone) add(h uint64) {
	d.mu.Lock()
	d.m[h] = true
	d.mu.Unlock()
}

// warmGapOnce refreshes every page of c still stale from the gap that
// done does not hold: it reports how many it tried and whether one
// failed (to be tried again).
func (p *Proxy) warmGapOnce(c *cache.Cache, done *gapDone) (tried int, _ bool) {
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	refresh := func(h uint64, warm func() bool) bool {
		if done.has(h) {
			return true
		}
		if !p.awaitLower(c) {
			return false
		}
		tried++
		select {
		case p.gapRefreshes <- struct{}{}: // a token: at most maxGapRefreshes at once
		case <-p.stop:
			return false
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-p.gapRefreshes }()
			if warm() {
				done.add(h)
			} else {
				failed.Store(true)
			}
		}()
		return true
	}
	c.EachGapped(func(h uint64, key string, e *cache.Entry) bool {
		return refresh(h, func() bool { return p.warmPage(c, h, key, e) })
	})
	// Then the pages only the disk tier holds: its grace deletes them
	// too, and most of a tier larger than RAM is there.
	c.EachGappedLower(func(h uint64, key string) bool {
		return refresh(h, func() bool { return p.warmLowerPage(c, h, key) })
	})
	wg.Wait()
	return tried, failed.Load()
}

// backlogWait is how often the warm-up looks again whether the disk
// tier's writer caught up.
const backlogWait = 5 * time.Millisecond

// awaitLower waits while c's lower tier has too many copies waiting: a
// refresh it would drop is lost from both tiers as soon as RAM evicts
// it, and the gap's end then deletes the file it replaced. It reports
// false when the Proxy closes.
func (p *Proxy) awaitLower(c *cache.Cache) bool {
	for c.LowerBacklogged() {
		t := time.NewTimer(backlogWait)
		select {
		case <-t.C:
		case <-p.stop:
			t.Stop()
			return false
		}
	}
	return true
}

// warmLowerPage reads the page the lower tier keeps stale under key
// (into RAM, if its admission takes it) and refreshes its plain variant
// as warmPage does.
func (p *Proxy) warmLowerPage(c *cache.Cache, h uint64, key string) bool {
	o := c.Fetch(h, []byte(key))
	if o == nil {
		return true // purged or evicted meanwhile
	}
	if e := c.PlainGapped(o); e != nil {
		return p.warmObject(c, h, key, o, e)
	}
	return true // refreshed meanwhile
}

// warmPage refreshes the plain page e stored under key (hash h) as a
// visitor's request of its URL would (runWarm: through the site's
// .htaccess rules, and its PHP for a docroot site), unless its site is
// not one of c, the rules refuse the request, or another refresh of it
// runs. A docroot site's page waits (false: tried again) while its PHP
// pool has no capacity to spare or the site has gapDocrootRefreshes of
// them in flight: a gap must not take every worker from visitors. It
// reports false when the refresh failed or waits.
func (p *Proxy) warmPage(c *cache.Cache, h uint64, key string, e *cache.Entry) bool {
	o := c.Lookup(h, []byte(key))
	if o == nil || o.Variant([]byte(e.Variant)) != e {
		return true // replaced meanwhile
	}
	return p.warmObject(c, h, key, o, e)
}

// warmObject refreshes e, a variant of o stored under key (hash h), as
// warmPage says; o need not be in RAM (a copy the disk tier gave back
// that RAM's admission refused).
func (p *Proxy) warmObject(c *cache.Cache, h uint64, key string, o *cache.Object, e *cache.Entry) bool {
	host, ok := keyHost(key)
	if !ok {
		return true // not a page's key (an ESI inline's)
	}
	g := p.enter()
	defer g.leave()
	s := g.router.route([]byte(host))
	if s.cache != c {
		return true // another site's now
	}
	if s.Docroot != nil {
		if !s.state.warm.takeGap(s) {
			return false
		}
		defer s.state.warm.gapInFlight.Add(-1)
	}
	switch p.runWarm(warmCandidate{key: key, h: h, vary: o.Vary, variant: e.Variant, gap: true}) {
	case warmFailed:
		return false
	}
	return true
}

// gapDocrootRefreshes bounds a docroot site's gap refreshes in flight.
const gapDocrootRefreshes = 2

// takeGap takes one of s's docroot gap refreshes, if one is free and its
// PHP pool has capacity to spare (its warm-up's MaxBusy, else 50 %).
func (w *warmState) takeGap(s *site) bool {
	busy := 50
	if s.Warm != nil {
		busy = s.Warm.MaxBusy
	}
	if w.gapInFlight.Add(1) > gapDocrootRefreshes || !spare(s.gauge, busy) {
		w.gapInFlight.Add(-1)
		return false
	}
	return true
}

// warmClient is who the origin is told asks for a warmed page: ramjet.
var warmClient = netip.AddrFrom4([4]byte{127, 0, 0, 1})
