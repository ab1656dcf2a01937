package disk

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

var gapKeys = []string{"http://s/a", "http://s/b", "http://s/c"}

// gappedFromDisk fetches every key and fails unless each comes back
// stale because of the gap (RAM's own rule applied to the disk's copy).
func gappedFromDisk(t *testing.T, n node, keys ...string) {
	t.Helper()
	for _, k := range keys {
		e := fetch(n, k, "")
		if e == nil {
			t.Fatalf("%s: not given back from disk after the gap", k)
		}
		if st := n.c.Status(e, n.c.Now()); st != cache.Stale || !n.c.Gapped(e) {
			t.Fatalf("%s: status %v, gapped %v; want stale because of the gap", k, st, n.c.Gapped(e))
		}
	}
}

// notServed fails if a key is given back servable.
func notServed(t *testing.T, n node, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if e := fetch(n, k, ""); e != nil && n.c.Status(e, n.c.Now()) != cache.Purged {
			t.Fatalf("%s: served after the grace", k)
		}
	}
}

func noFiles(t *testing.T, dir string) {
	t.Helper()
	// polls the directory: the timer's purge has no event to wait on
	if !testbed.Poll(10*time.Second, func() bool { return len(files(t, dir)) == 0 }) {
		t.Fatalf("files left after the grace: %v", files(t, dir))
	}
}

func TestGapServesPagesOnDiskOnlyStaleThenDeletesThem(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, gapKeys...)
	n := open(t, dir, 64<<20, Config{RAM: 1}, true)
	if lookup(n, gapKeys[0], "") != nil && lookup(n, gapKeys[1], "") != nil {
		t.Fatal("loaded into RAM: the test needs files on disk only")
	}
	grace := time.Second
	until := time.Now().Add(grace) // no later than the gap's own deadline
	n.c.MarkGap(grace)
	gappedFromDisk(t, n, gapKeys...)
	if fs := files(t, dir); len(fs) != len(gapKeys) {
		t.Fatalf("within the grace %d files are left, want %d", len(fs), len(gapKeys))
	}
	noFiles(t, dir)
	if time.Now().Before(until) {
		t.Fatal("files deleted before the grace ran out")
	}
	notServed(t, n, gapKeys...)
}

func TestRefreshDuringAGapOutlivesTheGrace(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, gapKeys...)
	n := open(t, dir, 64<<20, Config{RAM: 1}, true)
	n.c.MarkGap(time.Second)
	before := n.t.Snapshot().Written
	e := entry("", "refreshed")
	e.Born = n.c.Now() + 1 // the refresh's fill began after the gap
	store(n, gapKeys[0], cache.VarySpec{}, e)
	written(t, n, before+1)
	// polls the directory: the timer's purge has no event to wait on
	if !testbed.Poll(10*time.Second, func() bool { return len(files(t, dir)) == 1 }) {
		t.Fatalf("after the grace: files %v, want the refreshed one alone", files(t, dir))
	}
	if e := fetch(n, gapKeys[0], ""); e == nil || string(e.Body) != "refreshed" || n.c.Status(e, n.c.Now()) != cache.Fresh {
		t.Fatalf("the refreshed page is not served fresh after the grace: %+v", e)
	}
}

func TestRestartDuringAGapKeepsItsMarkAndDeadline(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, gapKeys...)
	a := start(t, dir, Config{})
	a.c.MarkGap(2 * time.Second)
	a.stop(t)

	b := open(t, dir, 64<<20, Config{RAM: 1}, true)
	gappedFromDisk(t, b, gapKeys...) // loaded into RAM or fetched: stale either way
	noFiles(t, dir)
	b.stop(t)
}

func TestRestartAfterAGapsGraceLoadsNothingFilledBeforeIt(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, gapKeys...)
	a := open(t, dir, 64<<20, Config{}, false) // no writer: the files stay whatever the timer does
	a.c.MarkGap(100 * time.Millisecond)
	until := time.Now().Add(100 * time.Millisecond)
	if err := a.t.Leave(); err != nil { // as an upgrade's predecessor would: its timer stops
		t.Fatal(err)
	}
	time.Sleep(time.Until(until)) // the grace is wall-clock time: let it run out
	b := open(t, dir, 64<<20, Config{RAM: 1}, true)
	notServed(t, b, gapKeys...)
	if fs := files(t, dir); len(fs) != 0 {
		t.Fatalf("files filled before the gap are left after its grace: %v", fs)
	}
}

func TestFlushAfterAGapEmptiesTheDisk(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, gapKeys...)
	n := open(t, dir, 64<<20, Config{RAM: 1}, true)
	n.c.MarkGap(time.Minute)
	n.c.PurgeAll(false, 0) // purge.gap: flush
	for _, k := range gapKeys {
		if fetch(n, k, "") != nil {
			t.Fatalf("%s: given back after a flush", k)
		}
	}
	noFiles(t, dir)
}

func TestGapListsThePagesOnDiskOnlyItKeepsStale(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, gapKeys...)
	n := open(t, dir, 64<<20, Config{RAM: 1}, true)
	var before []string
	n.c.EachGappedLower(func(uint64, string) bool { before = append(before, "x"); return true })
	if len(before) != 0 {
		t.Fatalf("%d keys listed with no gap", len(before))
	}
	n.c.MarkGap(time.Minute)
	listed := map[string]bool{}
	n.c.EachGappedLower(func(h uint64, key string) bool {
		if h != n.c.Hash([]byte(key)) {
			t.Errorf("%s: hash %x, want the cache's %x", key, h, n.c.Hash([]byte(key)))
		}
		listed[key] = true
		return true
	})
	if len(listed) == 0 {
		t.Fatal("no page on disk only listed after the gap")
	}
	for _, k := range gapKeys {
		if !listed[k] && lookup(n, k, "") == nil {
			t.Errorf("%s: on disk only and stale from the gap, not listed (%v)", k, listed)
		}
	}
}

// A page refreshed between two gaps keeps the second one's grace, across
// a restart too: the tier keeps each gap's mark with its deadline, and
// deletes the files of each when its grace runs out.
func TestPageRefreshedBetweenTwoGapsOutlivesTheFirstGraceAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, gapKeys...)
	a := start(t, dir, Config{})
	a.c.MarkGap(time.Second)
	until1 := time.Now().Add(time.Second)
	e := entry("", "refreshed")
	e.Born = a.c.Now() + 1 // the refresh's fill began after the first gap
	store(a, gapKeys[0], cache.VarySpec{}, e)
	a.c.MarkGap(3 * time.Second)
	a.stop(t)

	b := open(t, dir, 64<<20, Config{RAM: 1}, true)
	time.Sleep(time.Until(until1)) // the grace is wall-clock time: let the first run out
	// polls the directory: the timer's purge has no event to wait on
	if !testbed.Poll(10*time.Second, func() bool { return len(files(t, dir)) == 1 }) {
		t.Fatalf("after the first grace: files %v, want the refreshed one alone", files(t, dir))
	}
	notServed(t, b, gapKeys[1:]...)
	if got := fetch(b, gapKeys[0], ""); got == nil || string(got.Body) != "refreshed" || b.c.Status(got, b.c.Now()) != cache.Stale {
		t.Fatalf("the page refreshed between the gaps after the first grace: %+v, want it stale", got)
	}
	noFiles(t, dir) // the second grace
}

func FuzzParseGaps(f *testing.F) {
	for _, s := range []string{"1 2\n", "1 2\n3 4\n", "", "x", "1\n", "1 2 3\n", "-1 -2\n", "1 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		marks, err := parseGaps(s)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, m := range marks {
			fmt.Fprintf(&b, "%d %d\n", m[0], m[1])
		}
		again, err := parseGaps(b.String())
		if err != nil || !slices.Equal(again, marks) {
			t.Fatalf("%q: %v, written back and read %v (%v)", s, marks, again, err)
		}
	})
}
