package cache

import (
	"runtime"
	"sync"
	"sync/atomic"
	"weak"
)

// Purge by tag is O(1) in the number of tagged entries, as LiteSpeed does
// it: every tag has a purge time, every entry holds pointers to the tag
// states of its tags and the time its fill started, and a hit compares
// the two. Nothing is scanned at purge time; purged entries are dropped
// when next looked up or when their own expiry comes.
//
// A tag's state lives as long as an entry refers to it: the index holds
// weak pointers and a cleanup removes the name once the last entry is
// gone, so unique tags (one per URL) do not accumulate.

// tagState is the purge history of one tag, in unix nanoseconds.
type tagState struct {
	hard atomic.Int64
	soft atomic.Int64
}

type tagIndex struct {
	mu sync.Mutex // guards m
	m  map[string]weak.Pointer[tagState]
}

// intern returns the state of name, creating it if no entry holds it.
func (ix *tagIndex) intern(name string) *tagState {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if wp, ok := ix.m[name]; ok {
		if s := wp.Value(); s != nil {
			return s
		}
	}
	if ix.m == nil {
		ix.m = make(map[string]weak.Pointer[tagState])
	}
	s := &tagState{}
	wp := weak.Make(s)
	ix.m[name] = wp
	runtime.AddCleanup(s, ix.forget, tagRef{name: name, wp: wp})
	return s
}

type tagRef struct {
	name string
	wp   weak.Pointer[tagState]
}

// forget drops a collected state's name, unless the name was interned
// again since.
func (ix *tagIndex) forget(r tagRef) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.m[r.name] == r.wp {
		delete(ix.m, r.name)
	}
}

// purge records a purge of name at now. It reports whether any stored
// entry carries the tag.
func (ix *tagIndex) purge(name string, soft bool, now int64) bool {
	ix.mu.Lock()
	wp, ok := ix.m[name]
	ix.mu.Unlock()
	if !ok {
		return false
	}
	s := wp.Value()
	if s == nil {
		return false
	}
	s.mark(soft, now)
	return true
}

// purgeMatching purges every tag name for which match is true. It runs
// over the tags, never over the entries.
func (ix *tagIndex) purgeMatching(match func(string) bool, soft bool, now int64) int {
	ix.mu.Lock()
	var hit []*tagState
	for name, wp := range ix.m {
		if match(name) {
			if s := wp.Value(); s != nil {
				hit = append(hit, s)
			}
		}
	}
	ix.mu.Unlock()
	for _, s := range hit {
		s.mark(soft, now)
	}
	return len(hit)
}

func (s *tagState) mark(soft bool, now int64) {
	if soft {
		raise(&s.soft, now)
		return
	}
	raise(&s.hard, now)
}

// len is the number of live tags, for metrics.
func (ix *tagIndex) len() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.m)
}
