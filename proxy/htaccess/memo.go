package htaccess

import (
	"sync"
	"sync/atomic"
	"time"
)

// The memo remembers, for one StatInterval, what an evaluation decided
// for a request: a lookup's (Request.OneRound) status and cache rules,
// for the proxy before its cache, and a whole Outcome, for the docroot
// that serves the request. Repeat visitors — the same URL, agent,
// cookies, address — then cost a hash and a copy instead of running
// every rule again (~1.8 µs of CPU for WordPress's and the LiteSpeed
// Cache plugin's block). Each is a fixed table per shard, overwritten
// in place, so it neither grows nor allocates once its buffers have
// grown.
//
// One Memo serves every tree of a process (Config.Memo): an entry only
// lives for a StatInterval, so what is worth remembering is the last
// second of traffic, whatever the number of sites. A table per tree cost
// 1.6 MB of heap per site with .htaccess files, per config generation
// (480 MB for 300 sites, twice during a reload), all of it scanned by
// every garbage collection. Entries carry their tree's id: a tree never
// recalls another's decision, even for the same key.
const (
	memoShards = 16
	memoSlots  = 512 // per shard
	// serveSlots is smaller: an entry is a whole Outcome, and the
	// requests that reach the docroot are the cache's misses and passes.
	serveSlots = 128
)

// Memo is the table of remembered evaluations the trees given it share.
// A shard is allocated when first written, so a process whose sites see
// few distinct requests holds little of it.
type Memo struct {
	shards [memoShards]atomic.Pointer[memoShard]
	serve  [memoShards]atomic.Pointer[serveShard]
}

// NewMemo returns an empty memo for the trees of one process.
func NewMemo() *Memo { return &Memo{} }

// treeIDs numbers trees for the memo's entries; 0 is no tree.
var treeIDs atomic.Uint64

// treeMemo is a tree's part of the memo's state: which entries are its
// own and still current.
type treeMemo struct {
	*Memo
	id  uint64
	gen atomic.Uint64 // bumped when any file changes: every entry is stale
	off atomic.Bool   // a file reads the clock (%{TIME}): nothing is remembered
}

type serveShard struct {
	mu    sync.Mutex // guards slots
	slots [serveSlots]serveEntry
}

type serveEntry struct {
	tree uint64
	key  uint64
	gen  uint64
	at   time.Duration // memoClock's
	o    Outcome       // with buffers of its own
}

type memoShard struct {
	mu    sync.Mutex // guards slots
	slots [memoSlots]memoEntry
}

type memoEntry struct {
	tree   uint64
	key    uint64
	gen    uint64
	at     time.Duration // memoClock's
	status int
	cause  string
	cache  Cache // with buffers of its own
}

// spread mixes the tree's id into key, so that the sites' same requests
// (the same paths on every WordPress) land in different slots.
func (m *treeMemo) spread(key uint64) uint64 {
	return key ^ (m.id * 0x9e3779b97f4a7c15)
}

// lookupSlot is key's lookup entry and its shard; nil when the shard was
// never written and alloc is false.
func (m *treeMemo) lookupSlot(key uint64, alloc bool) (*memoShard, *memoEntry) {
	k := m.spread(key)
	sh := shard(&m.shards[k%memoShards], alloc)
	if sh == nil {
		return nil, nil
	}
	return sh, &sh.slots[(k/memoShards)%memoSlots]
}

// serveSlot is as lookupSlot for whole outcomes.
func (m *treeMemo) serveSlot(key uint64, alloc bool) (*serveShard, *serveEntry) {
	k := m.spread(key)
	sh := shard(&m.serve[k%memoShards], alloc)
	if sh == nil {
		return nil, nil
	}
	return sh, &sh.slots[(k/memoShards)%serveSlots]
}

// shard is *p, allocated on the first write (alloc); nil before it.
func shard[S any](p *atomic.Pointer[S], alloc bool) *S {
	if sh := p.Load(); sh != nil || !alloc {
		return sh
	}
	p.CompareAndSwap(nil, new(S))
	return p.Load()
}

// Recall fills o's Status, Cause and Cache from the memo when a lookup
// evaluation (Request.OneRound) with this key was remembered within the
// last StatInterval, and reports whether it did; the rest of o is not to
// be read then. key must hash everything about the request the rules
// may read (the proxy hashes the whole request head, the client's
// address and the scheme). When it reports false, evaluate and pass the
// token to Remember.
func (t *Tree) Recall(key uint64, o *Outcome) (token MemoToken, ok bool) {
	token = t.memoToken()
	if t.memo.off.Load() {
		return token, false
	}
	sh, e := t.memo.lookupSlot(key, false)
	if sh == nil {
		return token, false
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !t.current(token, key, e.tree, e.key, e.gen, e.at) {
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
	at  time.Duration
}

func (t *Tree) memoToken() MemoToken {
	return MemoToken{gen: t.memo.gen.Load(), at: t.memoClock()}
}

// memoClock is the time since the tree was made. Without a clock of the
// caller's it reads only the monotonic clock (time.Since), half of what
// time.Now costs: a cached page's repeat visitor pays it on every
// request.
func (t *Tree) memoClock() time.Duration {
	if t.ownClock {
		return time.Since(t.born)
	}
	return t.cfg.Now().Sub(t.born)
}

// current reports whether an entry (its tree, key, generation and time)
// holds key's decision for a Recall of this tree that saw token.
func (t *Tree) current(token MemoToken, key, eTree, eKey, eGen uint64, eAt time.Duration) bool {
	return eTree == t.memo.id && eKey == key && eGen == token.gen && token.at-eAt < t.cfg.StatInterval
}

// Remember keeps the lookup evaluation o made of the request hashed as
// key, after a Recall that gave token.
func (t *Tree) Remember(key uint64, token MemoToken, o *Outcome) {
	if t.memo.off.Load() {
		return
	}
	sh, e := t.memo.lookupSlot(key, true)
	sh.mu.Lock()
	e.tree, e.key, e.gen, e.at, e.status, e.cause = t.memo.id, key, token.gen, token.at, o.Status, o.Cause
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

// changed forgets every remembered decision of the tree: a file changed.
func (m *treeMemo) changed(f *File) {
	m.gen.Add(1)
	if f != nil && f.usesTime {
		m.off.Store(true)
	}
}

// RecallServe fills o with the whole evaluation (every round, as the
// docroot serves the request) remembered for key within the last
// StatInterval, and reports whether it did. As with Recall, key must
// hash everything about the request the rules may read; when it reports
// false, evaluate and pass the token to RememberServe.
func (t *Tree) RecallServe(key uint64, o *Outcome) (token MemoToken, ok bool) {
	token = t.memoToken()
	if t.memo.off.Load() {
		return token, false
	}
	sh, e := t.memo.serveSlot(key, false)
	if sh == nil {
		return token, false
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !t.current(token, key, e.tree, e.key, e.gen, e.at) {
		return token, false
	}
	copyOutcome(o, &e.o)
	return token, true
}

// RememberServe keeps the whole evaluation o made of the request hashed
// as key, after a RecallServe that gave token. An outcome with CO=
// cookies is not kept: their expiry is counted from the request.
func (t *Tree) RememberServe(key uint64, token MemoToken, o *Outcome) {
	if t.memo.off.Load() || len(o.cookies) > 0 {
		return
	}
	sh, e := t.memo.serveSlot(key, true)
	sh.mu.Lock()
	e.tree, e.key, e.gen, e.at = t.memo.id, key, token.gen, token.at
	copyOutcome(&e.o, o)
	sh.mu.Unlock()
}

// copyOutcome copies what an evaluation decided from src into dst,
// reusing dst's buffers: everything the Outcome's readers see (not the
// evaluation's scratch space). src has no cookies (RememberServe).
func copyOutcome(dst, src *Outcome) {
	dst.reset()
	dst.Status, dst.Realm, dst.Cause, dst.Err = src.Status, src.Realm, src.Cause, src.Err
	dst.Location = append(dst.Location, src.Location...)
	dst.Path = copyOwned(&dst.pathBuf[0], src.Path)
	dst.Query = copyOwned(&dst.queryBuf[0], src.Query)
	dst.Rewritten, dst.User, dst.Mime = src.Rewritten, src.User, src.Mime
	dst.Proxy = append(dst.Proxy, src.Proxy...)
	copyCache(&dst.Cache, &src.Cache)
	for i := range src.env {
		e := &src.env[i]
		if len(dst.env) < cap(dst.env) {
			dst.env = dst.env[:len(dst.env)+1]
		} else {
			dst.env = append(dst.env, envVar{})
		}
		d := &dst.env[len(dst.env)-1]
		d.name, d.val, d.redirect, d.unset = e.name, append(d.val[:0], e.val...), e.redirect, e.unset
	}
	dst.secs = append(dst.secs, src.secs...)
	dst.files = append(dst.files, src.files...)
	dst.dirs = append(dst.dirs, src.dirs...)
	dst.rounds, dst.proxy, dst.docRoot, dst.https = src.rounds, src.proxy, src.docRoot, src.https
}

// copyOwned copies src into buf and returns it, keeping nil as nil (a
// path or query the rules never set).
func copyOwned(buf *[]byte, src []byte) []byte {
	if src == nil {
		return nil
	}
	*buf = append((*buf)[:0], src...)
	return *buf
}
