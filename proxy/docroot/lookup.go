package docroot

import (
	"sync"
	"time"
)

// Path lookups are remembered briefly, as nginx's open_file_cache and
// LiteSpeed's stat cache do: resolving a path costs a stat per path segment
// plus symlink checks (~20–50 µs here), more than the rest of a PHP hello
// world on ramjet's side. A file created, removed or re-linked is seen
// within lookupTTL; static files are opened and stat'ed afresh to serve them.
const (
	lookupTTL = time.Second
	lookupMax = 8192 // entries; the map is dropped whole when full
)

type lookup struct {
	t  target
	at time.Time
}

// lookups caches resolve results by request path.
type lookups struct {
	mu sync.Mutex
	m  map[string]lookup
}

func (l *lookups) get(path string, now time.Time) (target, bool) {
	l.mu.Lock()
	e, ok := l.m[path]
	l.mu.Unlock()
	return e.fresh(ok, now)
}

// getBytes is get for a path held in bytes (no string is made for it).
func (l *lookups) getBytes(path []byte, now time.Time) (target, bool) {
	l.mu.Lock()
	e, ok := l.m[string(path)]
	l.mu.Unlock()
	return e.fresh(ok, now)
}

// fresh is the entry's target if it was found and is recent enough.
func (e lookup) fresh(found bool, now time.Time) (target, bool) {
	if !found || now.Sub(e.at) > lookupTTL {
		return target{}, false
	}
	return e.t, true
}

func (l *lookups) put(path string, t target, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) >= lookupMax {
		l.m = make(map[string]lookup, 64)
	}
	l.m[path] = lookup{t: t, at: now}
}

// lookup is resolve through the cache.
func (h *Handler) lookup(path string) target {
	now := time.Now()
	if t, ok := h.lookups.get(path, now); ok {
		return t
	}
	t := h.resolve(path)
	h.lookups.put(path, t, now)
	return t
}

// lookupBytes is lookup for a path in bytes (a .htaccess outcome's): a
// path the cache knows costs no allocation.
func (h *Handler) lookupBytes(path []byte) target {
	if t, ok := h.lookups.getBytes(path, time.Now()); ok {
		return t
	}
	return h.lookup(string(path))
}
