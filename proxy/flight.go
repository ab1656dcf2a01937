package proxy

import (
	"sync"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// flights coalesces concurrent misses of one key into one origin request.
// Followers wait for the leader's decision (not for its body) and then
// either read the stored entry or go to the origin themselves when the
// response could not be shared.
type flights struct {
	mu sync.Mutex // guards m
	m  map[string]*flight
}

type flight struct {
	done chan struct{}
	// Written before done is closed: whether the answer was stored, or
	// the stale entry the leader served because the origin failed (the
	// followers serve it too rather than each trying the origin again).
	stored bool
	stale  *cache.Entry
}

// join returns the flight for key and whether the caller leads it.
func (f *flights) join(key string) (*flight, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.m[key]; ok {
		return fl, false
	}
	if f.m == nil {
		f.m = make(map[string]*flight)
	}
	fl := &flight{done: make(chan struct{})}
	f.m[key] = fl
	return fl, true
}

// finish publishes the leader's outcome and lets followers go. The flight
// leaves the map first, so a request arriving after a non-shareable
// answer starts its own fill instead of waiting on a finished one.
func (f *flights) finish(key string, fl *flight, res *result) {
	f.mu.Lock()
	if f.m[key] == fl {
		delete(f.m, key)
	}
	f.mu.Unlock()
	fl.stored = res.stored
	if res.staleOnError {
		fl.stale = res.entry
	}
	close(fl.done)
}
