package purge

import (
	"fmt"
	"sync"
)

// A node that keeps its cache across a restart (the disk tier) keeps its
// place in the stream too: it resumes reading from there, and the purges
// other nodes published while it was down are applied to what it loaded,
// as if it had never left. Whatever the cursor cannot vouch for (Redis
// restarted, the stream trimmed past it) is a gap, noticed on the first
// read as for a running node.

// Position is where a subscriber stopped in the stream.
type Position struct {
	ID    string `json:"id"`    // last entry read, "ms-seq"
	Seen  int64  `json:"seen"`  // entries ever added up to and including ID
	Epoch string `json:"epoch"` // the epoch key's value then
}

// Position is where the subscriber stopped; call it after Close. ok is
// false when it was never placed (nothing to resume from).
func (f *Fanout) Position() (p Position, ok bool) {
	f.life.Lock()
	defer f.life.Unlock()
	if !f.closed.Load() || !f.cur.placed {
		return Position{}, false
	}
	return Position{ID: f.cur.id.String(), Seen: f.cur.seen, Epoch: f.cur.epoch}, true
}

// CaughtUp is closed once the subscriber has read to the end of the stream
// (after resuming: every purge missed is applied, or a gap was).
func (f *Fanout) CaughtUp() <-chan struct{} { return f.caught.ch }

// caughtUp is a channel closed once.
type caughtUp struct {
	once sync.Once
	ch   chan struct{}
}

func newCaughtUp() caughtUp { return caughtUp{ch: make(chan struct{})} }

func (c *caughtUp) close() { c.once.Do(func() { close(c.ch) }) }

// resumeAt places the cursor at p instead of the stream's end.
func (f *Fanout) resumeAt(p *Position) error {
	id, err := parseStreamID(p.ID)
	if err != nil {
		return fmt.Errorf("purge: resume: %w", err)
	}
	f.cur = cursor{placed: true, id: id, seen: p.Seen, epoch: p.Epoch}
	return nil
}
