package disk

import (
	"sync"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// The writer's queue is also an index, as a write-behind cache's is: a
// copy waits there under its key until its file is written and indexed,
// and a lookup RAM misses finds it there before the files (Fetch). RAM
// may evict a copy before the writer gets to it, and the file it
// replaces may be older or gone: a gap's end deletes every file filled
// before the gap, so the copy its warm-up refreshed would otherwise be
// nowhere but here, and its next visitor would go to the origin. A later
// store of a key replaces the copy waiting under it: the queue holds the
// newest copy of each key once, so its bound (Config.Queue) is in keys
// and a key stored often takes one place, not many.

// queue is the writer's bounded queue, indexed by key.
type queue struct {
	mu   sync.Mutex
	keys map[string]*slot // waiting, or being written until indexed
	ring []*slot          // the waiting ones, oldest first from head
	head int
	n    int
	// ready holds a token while something waits.
	ready chan struct{}
}

// slot is the newest copy of one key not yet on disk.
type slot struct {
	p       put
	waiting bool // in ring; false: the writer has it, until it is indexed
}

func newQueue(size int) *queue {
	return &queue{keys: map[string]*slot{}, ring: make([]*slot, size), ready: make(chan struct{}, 1)}
}

// push queues p, replacing the copy of its key still waiting. It reports
// false when p was dropped: the queue is full.
func (q *queue) push(p put) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.keys[p.o.Key]
	if s != nil && s.waiting {
		s.p = p
		return true
	}
	if q.n == len(q.ring) {
		return false
	}
	if s == nil {
		s = &slot{}
		q.keys[p.o.Key] = s
	}
	// A copy being written stays findable as this one until it is.
	s.p, s.waiting = p, true
	q.ring[(q.head+q.n)%len(q.ring)] = s
	q.n++
	q.signal()
	return true
}

// pop appends up to most of the oldest copies waiting to batch, for the
// writer, which calls done for each once it is indexed (or not written).
func (q *queue) pop(batch []put, most int) []put {
	q.mu.Lock()
	defer q.mu.Unlock()
	for ; q.n > 0 && len(batch) < most; q.n-- {
		s := q.ring[q.head]
		q.ring[q.head] = nil
		q.head = (q.head + 1) % len(q.ring)
		s.waiting = false
		batch = append(batch, s.p)
	}
	if q.n > 0 {
		q.signal()
	}
	return batch
}

// done forgets p, popped, unless a newer copy of its key waits.
func (q *queue) done(p put) {
	q.mu.Lock()
	if s := q.keys[p.o.Key]; s != nil && !s.waiting && s.p.o == p.o {
		delete(q.keys, p.o.Key)
	}
	q.mu.Unlock()
}

// find is the newest copy of key not yet on disk.
func (q *queue) find(key []byte) (put, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.keys[string(key)]
	if s == nil {
		return put{}, false
	}
	return s.p, true
}

// has reports whether a copy of key is not yet on disk.
func (q *queue) has(key []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.keys[string(key)] != nil
}

// waiting is how many copies wait for the writer.
func (q *queue) waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// signal leaves the writer a token. The caller holds mu.
func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// queued gives back the copy of key waiting for the writer (or being
// written), with the variants still servable (see servable), and whether
// one waits: nil then means none may be served, and the file, which the
// copy replaces (it may be being renamed over already), is not looked at.
// The caller holds the gate, so the purges it checks are all those queued
// so far, and a copy the writer indexes meanwhile is found in the files
// instead.
func (t *Tier) queued(key []byte) (*cache.Object, bool) {
	p, ok := t.q.find(key)
	if !ok {
		return nil, false
	}
	now := t.c.Now()
	var kept []*cache.Entry
	for _, e := range p.o.Variants {
		if t.servable(p, e, now) {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil, true
	}
	t.stats.hits.Add(1)
	t.stats.queued.Add(1)
	return &cache.Object{Key: p.o.Key, Vary: p.o.Vary, Variants: kept}, true
}

// servable reports whether e, a variant of p's copy, may be served: not
// expired, not invalidated in RAM (a purge by tag or of everything, a
// gap whose grace ran out), and covered by no purge handed to the tier
// since the copy was stored (one of a URL or a prefix took it out of RAM)
// nor by one not yet applied to the files, as a file's variants are not.
// Purges forgotten since it was stored leave it unservable. The caller
// holds the gate.
func (t *Tier) servable(p put, e *cache.Entry, now int64) bool {
	return !e.Expired(now) && !t.c.Invalidated(e) && !t.pending(p.o.Key, e) && !t.purgedSince(p, e)
}
