package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// A gap (cache.MarkGap: a Redis restart lost purges nobody can name)
// leaves the files filled before it as RAM leaves its entries: a fetch
// gives them back and RAM serves them stale while one request refreshes
// each, until the grace runs out; then one purge of everything filled up
// to the gap deletes them. Deleting them at once would send every page
// that lives on disk only to its origin together.
//
// The mark is kept in a file beside the markers, written durably before
// Gap returns, and read back by Open (cache.RestoreGap): a restart or an
// upgrade's successor during the grace serves the files stale until the
// same deadline, and one after it deletes them before anything is served.
// Dropping every file older than the gap at start instead would cost an
// upgrade during the grace every page on disk, the stampede the grace is
// there to avoid. A mark that cannot be written has the files deleted at
// once, as before: a pre-gap file is never served fresh.

// gapFile holds the last gap's mark: "at until", unix nanos.
const gapFile = "gap"

// gaps are the marks whose grace has not run out yet.
type gaps struct {
	mu     sync.Mutex
	marks  [][2]int64 // at, until
	timers []*time.Timer
}

// Gap keeps the files filled up to at until until (cache.GapKeeper).
func (t *Tier) Gap(at, until int64) {
	if err := t.saveGap(at, until); err != nil {
		t.log.Warn("disk tier: cannot keep a fan-out gap's mark; deleting what it left stale now", "err", err)
		t.Purged(cache.Purge{Key: cache.Everything, At: at})
		return
	}
	t.keepGap(at, until)
}

// keepGap has the files filled up to at deleted once until is past.
func (t *Tier) keepGap(at, until int64) {
	t.gaps.mu.Lock()
	defer t.gaps.mu.Unlock()
	t.gaps.marks = append(t.gaps.marks, [2]int64{at, until})
	t.gaps.timers = append(t.gaps.timers, time.AfterFunc(time.Duration(until-t.c.Now()), t.endGaps))
}

// endGaps queues the purge of every gap whose grace ran out.
func (t *Tier) endGaps() {
	now := t.c.Now()
	t.gaps.mu.Lock()
	defer t.gaps.mu.Unlock()
	left := t.gaps.marks[:0]
	for _, m := range t.gaps.marks {
		if m[1] > now {
			left = append(left, m)
			continue
		}
		t.Purged(cache.Purge{Key: cache.Everything, At: m[0]})
	}
	t.gaps.marks = left
}

// EachGapped calls fn with the key of every file filled up to a gap
// whose grace still runs (cache.GapLister), until fn returns false.
func (t *Tier) EachGapped(fn func(key string) bool) {
	var at int64
	now := t.c.Now()
	t.gaps.mu.Lock()
	for _, m := range t.gaps.marks {
		if m[1] > now {
			at = max(at, m[0])
		}
	}
	t.gaps.mu.Unlock()
	if at == 0 {
		return
	}
	t.gate.RLock()
	keys := make([]string, 0, len(t.files))
	for _, f := range t.files {
		if f.born <= at {
			keys = append(keys, f.key)
		}
	}
	t.gate.RUnlock()
	for _, k := range keys {
		if !fn(k) {
			return
		}
	}
}

// stopGaps stops the timers of a tier closing.
func (t *Tier) stopGaps() {
	t.gaps.mu.Lock()
	defer t.gaps.mu.Unlock()
	for _, tm := range t.gaps.timers {
		tm.Stop()
	}
}

// saveGap writes the mark durably, replacing the last one: the cache
// merges a gap into the one still in its grace (the later at, the earlier
// until), so the last mark covers every earlier one not yet ended, and the
// ended ones' files are deleted or will be by this one.
func (t *Tier) saveGap(at, until int64) error {
	tmp, err := os.CreateTemp(filepath.Join(t.cfg.Path, tmpDir), gapFile+".*")
	if err != nil {
		return fmt.Errorf("disk: gap mark: %w", err)
	}
	_, err = fmt.Fprintf(tmp, "%d %d\n", at, until)
	err = errors.Join(err, tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(t.cfg.Path, gapFile))
	}
	if err == nil {
		err = syncDir(t.cfg.Path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name()) // best effort: load clears tmp anyway
		return fmt.Errorf("disk: gap mark: %w", err)
	}
	return nil
}

// loadGap restores the last run's gap into the cache, before the files
// are read: in its grace they load stale, after it they load purged and
// the purge queued here deletes them before anything is served. A mark unreadable
// leaves every file suspect: they are all treated as filled before it.
func (t *Tier) loadGap() error {
	b, err := os.ReadFile(filepath.Join(t.cfg.Path, gapFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("disk: gap mark: %w", err)
	}
	var at, until int64
	if _, err := fmt.Sscanf(string(b), "%d %d\n", &at, &until); err != nil {
		t.log.Warn("disk tier: unreadable fan-out gap mark; deleting every file", "err", err)
		at, until = t.c.Now(), 0
	}
	t.c.RestoreGap(at, until)
	if until <= t.c.Now() {
		t.Purged(cache.Purge{Key: cache.Everything, At: at})
		return nil
	}
	t.keepGap(at, until)
	return nil
}

var _ cache.GapKeeper = (*Tier)(nil)
