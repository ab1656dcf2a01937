package disk

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"golang.org/x/sys/unix"
)

// A file lent once is kept open with its parsed head (held), as nginx
// keeps its cache files' descriptors (open_file_cache) and its cache node
// where the body starts: the next hit on it is a lookup, the purge checks
// and the answer's two system calls (the head's write, the sendfile),
// with no open, no read, no parse and no ready head built again.
//
// A held file is the very file a whole read checked: the tier's own
// writes never change a file in place (a new copy is a new file, renamed
// over the name), and whatever unindexes a file (a new copy, a purge, an
// eviction, an expiry) drops its held descriptor at once, so a kept
// descriptor never serves a copy the tier replaced or deleted. What the
// tier did not do (a file changed underneath by hand) is caught as nginx
// catches it (open_file_cache_valid): a held file is checked again with
// fstat when it was last checked more than Config.Recheck ago.
//
// Kept descriptors are bounded (Config.OpenFiles; the process's bound,
// shared by every tier, is a quarter of its RLIMIT_NOFILE, at most
// 4096): past it the least recently lent is closed. An answer holds a
// reference, so a descriptor dropped while it is sent is closed only once
// the answer ends.

// defaultOpenFiles is the most descriptors the tiers of a process keep
// open by default, when RLIMIT_NOFILE allows four times as many.
const defaultOpenFiles = 4096

// defaultRecheck is how long a held file goes unchecked.
const defaultRecheck = time.Second

// processOpenFiles bounds the descriptors every tier of the process
// keeps (a variable: tests lower it).
var processOpenFiles = sync.OnceValue(func() int64 {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 256
	}
	return int64(min(uint64(defaultOpenFiles), lim.Cur/4))
})

// heldOpen counts the descriptors every tier of the process keeps.
var heldOpen atomic.Int64

// held is one file kept open with its parsed head.
type held struct {
	file *os.File
	id   ident
	obj  cache.Object
	// refs: one for the tier while it keeps h, one per answer lent it;
	// the descriptor is closed at 0.
	refs    atomic.Int32
	checked atomic.Int64 // when fstat last found it unchanged (the cache's clock)
	// sent is checked's value when a body was last sent whole from it
	// (neverSent before), and warmFor how far checked may have moved on
	// since for the file to count as warm (warmth.go).
	sent    atomic.Int64
	warmFor int64
	owner   *file
	stats   *Stats // its tier's
	// The tier's list of held files, the most recently lent first; under
	// heldFiles.mu.
	prev, next *held
}

// acquire takes a reference unless the descriptor is closed (or closing).
func (h *held) acquire() bool {
	for {
		n := h.refs.Load()
		if n <= 0 {
			return false
		}
		if h.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release gives a reference back (cache.Releaser).
func (h *held) Release() {
	if h.refs.Add(-1) == 0 {
		h.file.Close() //nolint:errcheck // read-only
	}
}

// Answered counts a hit: a copy lent answers its request
// (cache.LendCounter).
func (h *held) Answered() { h.stats.hits.Add(1) }

// Sending counts a body sent from the file with sendfile
// (cache.LendCounter).
func (h *held) Sending() { h.stats.sendfiles.Add(1) }

// heldFiles is a tier's held files.
type heldFiles struct {
	mu         sync.Mutex
	head, tail *held
	n          int
	open       atomic.Int64 // n, for the metrics: this tier's
	closed     bool         // Close dropped them all: none is kept any more
}

func (l *heldFiles) push(h *held) {
	h.prev, h.next = nil, l.head
	if l.head != nil {
		l.head.prev = h
	} else {
		l.tail = h
	}
	l.head = h
	l.n++
	l.open.Add(1)
	heldOpen.Add(1)
}

func (l *heldFiles) unlist(h *held) {
	if h.prev != nil {
		h.prev.next = h.next
	} else {
		l.head = h.next
	}
	if h.next != nil {
		h.next.prev = h.prev
	} else {
		l.tail = h.prev
	}
	h.prev, h.next = nil, nil
	l.n--
	l.open.Add(-1)
	heldOpen.Add(-1)
}

// held is f's held file for FileOf (heldAs): the one the tier wrote or
// loaded into RAM's copy (f.from); nil when f holds none.
func (t *Tier) held(f *file, now int64) *held {
	if f.from == nil {
		return nil
	}
	return t.heldAs(f, &f.from.id, now)
}

// heldAs is f's held file with a reference for the caller, when it has
// one that is the file want says (a descriptor kept from another file of
// the same name, say one another process replaced, is dropped) and still
// unchanged at now (the cache's clock); nil otherwise.
func (t *Tier) heldAs(f *file, want *ident, now int64) *held {
	h := f.held.Load()
	if h == nil || !h.acquire() {
		return nil
	}
	if h.id != *want || !t.unchanged(h, now) {
		h.Release()
		t.unhold(f, h)
		return nil
	}
	l := &t.kept
	l.mu.Lock()
	if f.held.Load() == h && l.head != h { // still kept: the most recently lent now
		l.unlist(h)
		l.push(h)
	}
	l.mu.Unlock()
	return h
}

// unchanged reports whether h is still the file checked at now, with an
// fstat when the last is older than Config.Recheck.
func (t *Tier) unchanged(h *held, now int64) bool {
	if now-h.checked.Load() < int64(t.recheck()) {
		return true
	}
	if id, err := fstatID(int(h.file.Fd())); err != nil || id != h.id {
		return false
	}
	h.checked.Store(now)
	return true
}

func (t *Tier) recheck() time.Duration {
	if t.cfg.Recheck != 0 {
		return t.cfg.Recheck
	}
	return defaultRecheck
}

// keep makes h f's held file, closing the least recently lent past the
// bounds; false when it cannot (the bounds are reached by other tiers, or
// another answer kept one first): h then serves its one answer.
func (t *Tier) keep(f *file, h *held) bool {
	l := &t.kept
	var gone []*held
	l.mu.Lock()
	bound, process := int64(t.cfg.OpenFiles), processOpenFiles()
	if bound <= 0 {
		bound = process
	}
	for l.tail != nil && (int64(l.n) >= bound || heldOpen.Load() >= process) {
		old := l.tail
		l.unlist(old)
		old.owner.held.Store(nil)
		gone = append(gone, old)
	}
	ok := !l.closed && int64(l.n) < bound && heldOpen.Load() < process && f.held.CompareAndSwap(nil, h)
	if ok {
		h.refs.Add(1) // the tier's
		l.push(h)
	}
	l.mu.Unlock()
	for _, old := range gone {
		old.Release()
	}
	return ok
}

// unhold closes f's held file (h, or whichever it is when h is nil) once
// the answers sending from it end: f was unindexed, or changed
// underneath.
func (t *Tier) unhold(f *file, h *held) {
	l := &t.kept
	l.mu.Lock()
	cur := f.held.Load()
	if cur == nil || h != nil && cur != h {
		l.mu.Unlock()
		return
	}
	f.held.Store(nil)
	l.unlist(cur)
	l.mu.Unlock()
	cur.Release()
}

// unholdAll closes every held file (Close) and keeps none from then on.
func (t *Tier) unholdAll() {
	l := &t.kept
	l.mu.Lock()
	var gone []*held
	for l.head != nil {
		h := l.head
		l.unlist(h)
		h.owner.held.Store(nil)
		gone = append(gone, h)
	}
	l.closed = true
	l.mu.Unlock()
	for _, h := range gone {
		h.Release()
	}
}

// Held is how many files the tier keeps open.
func (t *Tier) Held() int { return int(t.kept.open.Load()) }

var _ cache.LendCounter = (*held)(nil)
