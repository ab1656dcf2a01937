package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	if t.handed.Load() { // the successor keeps its own marks (Checkpoint)
		t.keepGap(at, until)
		return
	}
	if t.markGaps(append(t.running(), [2]int64{at, until})) {
		t.keepGap(at, until)
	}
}

// markGaps writes marks (saveGap); when it cannot, the files they leave
// stale are deleted now instead, and it reports false: a pre-gap file is
// never served fresh after a restart.
func (t *Tier) markGaps(marks [][2]int64) bool {
	if err := t.saveGap(marks); err != nil {
		t.log.Warn("disk tier: cannot keep a fan-out gap's mark; deleting what it left stale now", "err", err)
		t.Purged(cache.Purge{Key: cache.Everything, At: latest(marks)})
		return false
	}
	return true
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

// running is the marks whose grace has not run out.
func (t *Tier) running() [][2]int64 {
	now := t.c.Now()
	t.gaps.mu.Lock()
	defer t.gaps.mu.Unlock()
	var out [][2]int64
	for _, m := range t.gaps.marks {
		if m[1] > now {
			out = append(out, m)
		}
	}
	return out
}

// EachGapped calls fn with the key of every file filled up to a gap
// whose grace still runs (cache.GapLister), until fn returns false.
func (t *Tier) EachGapped(fn func(key string) bool) {
	at := latest(t.running())
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

// latest is the newest gap's time among marks, 0 for none.
func latest(marks [][2]int64) int64 {
	var at int64
	for _, m := range marks {
		at = max(at, m[0])
	}
	return at
}

// stopGaps stops the timers of a tier closing.
func (t *Tier) stopGaps() {
	t.gaps.mu.Lock()
	defer t.gaps.mu.Unlock()
	for _, tm := range t.gaps.timers {
		tm.Stop()
	}
}

// saveGap writes the marks durably, one a line, replacing the last ones:
// those still in their grace (each keeps its own deadline: the cache
// keeps the files filled between two gaps for the second one's grace).
func (t *Tier) saveGap(marks [][2]int64) error {
	tmp, err := os.CreateTemp(filepath.Join(t.cfg.Path, tmpDir), gapFile+".*")
	if err != nil {
		return fmt.Errorf("disk: gap mark: %w", err)
	}
	for _, m := range marks {
		if _, werr := fmt.Fprintf(tmp, "%d %d\n", m[0], m[1]); werr != nil {
			err = werr
			break
		}
	}
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

// loadGap restores the last run's gaps into the cache, before the files
// are read: in a grace its files load stale, after it they load purged
// and the purge queued here deletes them before anything is served. A
// mark unreadable leaves every file suspect: they are all treated as
// filled before it.
func (t *Tier) loadGap() error {
	b, err := os.ReadFile(filepath.Join(t.cfg.Path, gapFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("disk: gap mark: %w", err)
	}
	marks, err := parseGaps(string(b))
	if err != nil {
		t.log.Warn("disk tier: unreadable fan-out gap mark; deleting every file", "err", err)
		marks = [][2]int64{{t.c.Now(), 0}}
	}
	for _, m := range marks {
		t.c.RestoreGap(m[0], m[1])
		if m[1] <= t.c.Now() {
			t.Purged(cache.Purge{Key: cache.Everything, At: m[0]})
			continue
		}
		t.keepGap(m[0], m[1])
	}
	return nil
}

// parseGaps reads the lines "at until" of a gap file.
func parseGaps(s string) ([][2]int64, error) {
	var marks [][2]int64
	for line := range strings.Lines(s) {
		var at, until int64
		if _, err := fmt.Sscanf(line, "%d %d\n", &at, &until); err != nil {
			return nil, fmt.Errorf("line %d: %w", len(marks)+1, err)
		}
		marks = append(marks, [2]int64{at, until})
	}
	if len(marks) == 0 {
		return nil, errors.New("no mark")
	}
	return marks, nil
}

var _ cache.GapKeeper = (*Tier)(nil)
