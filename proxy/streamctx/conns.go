package streamctx

import "sync"

// Conns is the set of a server's open connections and whether it began
// draining, which HTTP/2 and HTTP/3 keep alike. The zero value is ready.
type Conns[C comparable] struct {
	mu       sync.Mutex
	set      map[C]struct{}
	draining bool
}

// Track adds or removes c; it reports whether draining began, when a
// connection being added must GOAWAY at once.
func (t *Conns[C]) Track(c C, add bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if add {
		if t.set == nil {
			t.set = make(map[C]struct{})
		}
		t.set[c] = struct{}{}
	} else {
		delete(t.set, c)
	}
	return t.draining
}

// Drain marks the set draining and returns the connections open now.
func (t *Conns[C]) Drain() []C {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.draining = true
	return t.list()
}

// Open returns the connections open now.
func (t *Conns[C]) Open() []C {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.list()
}

func (t *Conns[C]) list() []C {
	out := make([]C, 0, len(t.set))
	for c := range t.set {
		out = append(out, c)
	}
	return out
}
