package proxy

import (
	"net/netip"
	"strings"
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
	go func() {
		defer p.bg.Done()
		for time.Now().Before(until) && p.warmGapOnce(c) {
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

// warmGapOnce refreshes every page of c still stale from the gap and
// reports whether one is left to try again (its refresh failed).
func (p *Proxy) warmGapOnce(c *cache.Cache) bool {
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	refresh := func(warm func() bool) bool {
		if !p.awaitLower(c) {
			return false
		}
		select {
		case p.gapRefreshes <- struct{}{}: // a token: at most maxGapRefreshes at once
		case <-p.stop:
			return false
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-p.gapRefreshes }()
			if !warm() {
				failed.Store(true)
			}
		}()
		return true
	}
	c.EachGapped(func(h uint64, key string, e *cache.Entry) bool {
		return refresh(func() bool { return p.warmPage(c, h, key, e) })
	})
	// Then the pages only the disk tier holds: its grace deletes them
	// too, and most of a tier larger than RAM is there.
	c.EachGappedLower(func(h uint64, key string) bool {
		return refresh(func() bool { return p.warmLowerPage(c, h, key) })
	})
	wg.Wait()
	return failed.Load()
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

// warmLowerPage brings the page the lower tier keeps stale under key back
// into RAM and refreshes its plain variant as warmPage does.
func (p *Proxy) warmLowerPage(c *cache.Cache, h uint64, key string) bool {
	o := c.Fetch(h, []byte(key))
	if o == nil {
		return true // purged or evicted meanwhile
	}
	now := c.Now()
	for _, e := range o.Variants {
		if strings.Trim(e.Variant, "\x00") == "" && c.Status(e, now) == cache.Stale {
			return p.warmPage(c, h, key, e)
		}
	}
	return true
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
	host, ok := keyHost(key)
	if !ok {
		return true // not a page's key (an ESI inline's)
	}
	g := p.enter()
	defer g.leave()
	s := g.router.route([]byte(host))
	o := c.Lookup(h, []byte(key))
	if s.cache != c || o == nil || o.Variant([]byte(e.Variant)) != e {
		return true // another site's now, or replaced meanwhile
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
