package htaccess

import (
	"sync"
	"sync/atomic"
	"time"
)

// The memo remembers, for one StatInterval, what a lookup evaluation
// (Request.OneRound) decided for a request: its status and cache rules.
// A cached page's repeat visitors — the same URL, agent, cookies,
// address — then cost a hash and a copy instead of running every rule
// again (~1.5 µs for WordPress's and the LiteSpeed Cache plugin's
// block). It is a fixed table per shard, overwritten in place, so it
// neither grows nor allocates once its buffers have grown.
const (
	memoShards = 16
	memoSlots  = 256 // per shard
)

type memo struct {
	gen    atomic.Uint64 // bumped when any file changes: every entry is stale
	off    atomic.Bool   // a file reads the clock (%{TIME}): nothing is remembered
	shards [memoShards]memoShard
}

type memoShard struct {
	mu    sync.Mutex // guards slots
	slots [memoSlots]memoEntry
}

type memoEntry struct {
	key    uint64
	gen    uint64
	at     time.Time
	status int
	cause  string
	cache  Cache // with buffers of its own
}

// Recall fills o's Status, Cause and Cache from the memo when a lookup
// evaluation (Request.OneRound) with this key was remembered within the
// last StatInterval, and reports whether it did; the rest of o is not to
// be read then. key must hash everything about the request the rules
// may read (the proxy hashes the whole request head, the client's
// address and the scheme). When it reports false, evaluate and pass the
// token to Remember.
func (t *Tree) Recall(key uint64, o *Outcome) (token MemoToken, ok bool) {
	token = MemoToken{gen: t.memo.gen.Load(), at: t.cfg.Now()}
	if t.memo.off.Load() {
		return token, false
	}
	sh := &t.memo.shards[key%memoShards]
	e := &sh.slots[(key/memoShards)%memoSlots]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e.key != key || e.gen != token.gen || token.at.Sub(e.at) >= t.cfg.StatInterval {
		return token, false
	}
	o.reset()
	o.Status, o.Cause = e.status, e.cause
	copyCache(&o.Cache, &e.cache)
	return token, true
}

// MemoToken is what Recall saw: the files' generation and the time, so
// that a decision made while a file changed is not remembered as current.
type MemoToken struct {
	gen uint64
	at  time.Time
}

// Remember keeps the lookup evaluation o made of the request hashed as
// key, after a Recall that gave token.
func (t *Tree) Remember(key uint64, token MemoToken, o *Outcome) {
	if t.memo.off.Load() {
		return
	}
	sh := &t.memo.shards[key%memoShards]
	e := &sh.slots[(key/memoShards)%memoSlots]
	sh.mu.Lock()
	e.key, e.gen, e.at, e.status, e.cause = key, token.gen, token.at, o.Status, o.Cause
	copyCache(&e.cache, &o.Cache)
	sh.mu.Unlock()
}

// copyCache copies src into dst, reusing dst's buffers.
func copyCache(dst, src *Cache) {
	vary, cookies, drop := dst.Vary, dst.VaryCookies, dst.DropQuery
	*dst = *src
	dst.Vary = append(vary[:0], src.Vary...)
	dst.VaryCookies = append(cookies[:0], src.VaryCookies...)
	dst.DropQuery = append(drop[:0], src.DropQuery...)
}

// changed forgets every remembered decision: a file changed.
func (m *memo) changed(f *File) {
	m.gen.Add(1)
	if f != nil && f.usesTime {
		m.off.Store(true)
	}
}
