package waf

import (
	"sync"
	"sync/atomic"

	"github.com/corazawaf/coraza/v3"
	"github.com/corazawaf/coraza/v3/experimental"
)

// Set is one compiled rule set, shared by every site with its Rules and
// safe for concurrent use: each inspection has a transaction of its own.
type Set struct {
	waf   coraza.WAF
	rules Rules
	key   string
}

// Rules are the settings the set was compiled from.
func (s *Set) Rules() Rules { return s.rules }

// RuleCount is how many rules the set holds.
func (s *Set) RuleCount() int {
	if c, ok := s.waf.(experimental.WAFWithRules); ok {
		return c.RulesCount()
	}
	return 0
}

// Library hands out compiled sets: one per distinct Rules, compiled on
// first use and kept while a configuration uses it, so that a reload
// that keeps a site's rules keeps its set (compiling the CRS takes a
// while and tens of MiB). It is safe for concurrent use.
type Library struct {
	mu       sync.Mutex      // guards sets
	sets     map[string]*Set // by Rules.key
	compiled atomic.Int64    // rule sets compiled, ever
}

// NewLibrary returns an empty library.
func NewLibrary() *Library { return &Library{sets: map[string]*Set{}} }

// Get returns the set of r, compiling it unless the library holds it.
// A rule file that cannot be read or does not compile is an error, and
// nothing is kept.
func (l *Library) Get(r Rules) (*Set, error) {
	key, err := r.key()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	s := l.sets[key]
	l.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err = compile(r, key) // outside the lock: compiling takes long
	if err != nil {
		return nil, err
	}
	l.compiled.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if had := l.sets[key]; had != nil {
		return had, nil // compiled meanwhile by another caller
	}
	l.sets[key] = s
	return s, nil
}

// Keep forgets every set but those in use: what a configuration that
// now serves no longer needs is left to in-flight requests and the
// garbage collector.
func (l *Library) Keep(inUse []*Set) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, s := range l.sets {
		keep := false
		for _, u := range inUse {
			keep = keep || u == s
		}
		if !keep {
			delete(l.sets, k)
		}
	}
}

// Len is the number of sets held.
func (l *Library) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sets)
}

// Compiled is how many rule sets the library has compiled since it was
// made: a configuration without a WAF compiles none (and the CRS's tens
// of MiB are never built).
func (l *Library) Compiled() int64 { return l.compiled.Load() }
