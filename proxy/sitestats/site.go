package sitestats

import (
	"sync"
	"time"
)

// Config bounds what a site keeps.
type Config struct {
	// TopURLs is how many uncached URLs the site's list holds; 0 keeps
	// none.
	TopURLs int
}

// Site is one site's history: snapshots of its counters and its list of
// URLs answered uncached. Its methods are safe for concurrent use.
type Site struct {
	// read returns the site's counters now; they only grow.
	read func() Counts

	mu    sync.Mutex // guards rings
	rings [windows]ring

	// urls lists what went upstream uncached and stopped what the WAF
	// stopped, each bounded by TopURLs: stopping costs a client nothing
	// upstream, so a flood of attacks must not push out the URLs the
	// owner can do something about.
	urlMu         sync.Mutex // guards urls and stopped
	urls, stopped *top
}

// ReasonWAF is the reason of a request the WAF stopped.
const ReasonWAF = "waf"

// New returns the history of the site whose counters read returns, born
// at now: every window reaches back to now at most.
func New(cfg Config, read func() Counts, now time.Time) *Site {
	s := &Site{read: read, urls: newTop(cfg.TopURLs), stopped: newTop(cfg.TopURLs)}
	for w, sp := range spans {
		s.rings[w] = newRing(sp.length, sp.step)
	}
	s.Sample(now)
	return s
}

// Resize applies a new config's bound to the URL list.
func (s *Site) Resize(cfg Config) {
	s.urlMu.Lock()
	defer s.urlMu.Unlock()
	s.urls.resize(cfg.TopURLs)
	s.stopped.resize(cfg.TopURLs)
}

// Sample takes a snapshot of the counters at now, into each ring whose
// step now has none yet. Call it about once a second.
func (s *Site) Sample(now time.Time) {
	c, t := s.read(), now.Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.rings {
		s.rings[w].add(t, c)
	}
}

// Totals are the counters now, since they began.
func (s *Site) Totals() Counts { return s.read() }

// Over is what was counted in the window w back from now.
func (s *Site) Over(w Window, now time.Time) Counts {
	since := now.Unix() - spans[w].length
	s.mu.Lock()
	base, _ := s.rings[w].base(since)
	s.mu.Unlock()
	return s.read().Sub(base)
}

// Uncached counts a request of the URL scheme+host+uri (scheme as
// "https://") answered without caching, for reason (see URL.Reason).
func (s *Site) Uncached(scheme, host, uri, reason []byte, now time.Time) {
	s.urlMu.Lock()
	defer s.urlMu.Unlock()
	list := s.urls
	if string(reason) == ReasonWAF {
		list = s.stopped
	}
	list.add(scheme, host, uri, reason, now.Unix())
}

// URLs lists the URLs answered uncached within the last day, most
// requested first, then those the WAF stopped, most requested first.
func (s *Site) URLs(now time.Time) []URL {
	s.urlMu.Lock()
	defer s.urlMu.Unlock()
	since := now.Unix() - spans[Day].length
	return append(s.urls.list(since), s.stopped.list(since)...)
}
