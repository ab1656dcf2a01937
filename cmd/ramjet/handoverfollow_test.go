package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/cache/disk"
	"github.com/ramjet-proxy/ramjet/purge"
)

// followed records what a follower did to the cache.
type followed struct {
	applied []string // the tags purged
	gaps    []string
	gone    bool
}

func (f *followed) deps() followerDeps {
	return followerDeps{
		apply: func(c purge.Command) { f.applied = append(f.applied, c.Targets[0].Value) },
		gap:   func(why string) { f.gaps = append(f.gaps, why) },
		gone:  func() bool { return f.gone },
		log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// journalAt is a journal the test writes as the old process does.
func journalAt(t *testing.T) (*journal, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), journalFile)
	j := &journal{}
	if err := j.open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.close(false) })
	return j, path
}

func purgeTag(t *testing.T, j *journal, tag string) {
	t.Helper()
	cmd := purge.Command{Targets: []purge.Target{{Kind: purge.KindTag, Value: tag}}}
	if err := j.add(journalLine{Cmd: &cmd}); err != nil {
		t.Fatal(err)
	}
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// failAdd has j add a purge to its own file opened read-only, as a
// write fails on a full disk, and checks the error.
func failAdd(t *testing.T, j *journal) {
	t.Helper()
	j.mu.Lock()
	ro, err := os.Open("/proc/self/fd/" + strconv.Itoa(int(j.f.Fd())))
	if err != nil {
		j.mu.Unlock()
		t.Fatal(err)
	}
	_ = j.f.Close()
	j.f = ro
	j.mu.Unlock()
	cmd := purge.Command{Targets: []purge.Target{{Kind: purge.KindTag, Value: "lost"}}}
	if err := j.add(journalLine{Cmd: &cmd}); err == nil {
		t.Fatal("add to a file it cannot write reported no error")
	}
}

// mustBeGone fails unless nothing is at path.
func mustBeGone(t *testing.T, path, what string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s: %v", what, err)
	}
}

func mustFollow(t *testing.T, path string, f *followed) *journalFollower {
	t.Helper()
	jf, ended, err := followJournal(path, f.deps())
	if err != nil || ended {
		t.Fatalf("followJournal = ended %v, %v; want a journal to follow", ended, err)
	}
	t.Cleanup(func() { _ = jf.closeFile() })
	return jf
}

func TestFollowerAppliesTheOldProcessPurgesAndStopsAtTheJournalEnd(t *testing.T) {
	j, path := journalAt(t)
	purgeTag(t, j, "a")
	f := &followed{}
	jf := mustFollow(t, path, f)
	if len(f.applied) != 1 || f.applied[0] != "a" {
		t.Fatalf("applied before serving: %v, want [a]", f.applied)
	}
	purgeTag(t, j, "b")
	if jf.step() {
		t.Fatal("following ended before the journal's end")
	}
	if err := j.close(true); err != nil {
		t.Fatal(err)
	}
	if !jf.step() {
		t.Fatal("following goes on after the journal's end")
	}
	if len(f.applied) != 2 || f.applied[1] != "b" || len(f.gaps) != 0 {
		t.Fatalf("applied %v, gaps %v; want [a b] and none", f.applied, f.gaps)
	}
	mustBeGone(t, path, "the journal followed to its end is still there")
}

func TestFollowerWaitsForTheRestOfAHalfWrittenLine(t *testing.T) {
	_, path := journalAt(t)
	f := &followed{}
	jf := mustFollow(t, path, f)
	b, err := json.Marshal(journalLine{Cmd: &purge.Command{Targets: []purge.Target{{Kind: purge.KindTag, Value: "half"}}}})
	if err != nil {
		t.Fatal(err)
	}
	appendRaw(t, path, string(b[:10]))
	if jf.step() || len(f.applied) != 0 || len(f.gaps) != 0 {
		t.Fatalf("half a line: applied %v, gaps %v", f.applied, f.gaps)
	}
	appendRaw(t, path, string(b[10:])+"\n")
	jf.step()
	if len(f.applied) != 1 || f.applied[0] != "half" || len(f.gaps) != 0 {
		t.Fatalf("the whole line: applied %v, gaps %v; want [half], no gap", f.applied, f.gaps)
	}
}

// The old process removes its journal when it cannot write a purge (a
// full disk): from then on the new process cannot know what the old one
// purges, so it treats its cache as a gap at once, and again when the
// old process ended, for what it purged meanwhile.
func TestFollowerTreatsARemovedJournalAsAGapNowAndWhenTheOldProcessEnds(t *testing.T) {
	j, path := journalAt(t)
	f := &followed{}
	jf := mustFollow(t, path, f)
	purgeTag(t, j, "a")
	failAdd(t, j)
	mustBeGone(t, path, "the journal the old process could not write is still there")
	purgeTag(t, j, "after") // nothing done: the journal is gone
	if jf.step() {
		t.Fatal("following ended while the old process runs")
	}
	if len(f.applied) != 1 || f.applied[0] != "a" || len(f.gaps) != 1 {
		t.Fatalf("applied %v, gaps %v; want [a] and one gap", f.applied, f.gaps)
	}
	if jf.step() || len(f.gaps) != 1 {
		t.Fatalf("a second step while the old process runs: gaps %v, want still one", f.gaps)
	}
	f.gone = true
	if !jf.step() {
		t.Fatal("following goes on after the old process ended")
	}
	if len(f.gaps) != 2 {
		t.Fatalf("gaps %v; want a second one when the old process ended", f.gaps)
	}
}

func TestFollowerTreatsALineItCannotReadAsAGap(t *testing.T) {
	_, path := journalAt(t)
	f := &followed{}
	jf := mustFollow(t, path, f)
	appendRaw(t, path, "{\"cmd\": not json\n")
	if jf.step() || len(f.gaps) != 1 {
		t.Fatalf("after a broken line: gaps %v, want one", f.gaps)
	}
	appendRaw(t, path, `{"end":true}`+"\n")
	if jf.step() {
		t.Fatal("a broken journal was followed on to its end")
	}
	f.gone = true
	if !jf.step() || len(f.gaps) != 2 {
		t.Fatalf("after the old process ended: gaps %v, want two", f.gaps)
	}
}

func TestFollowerWithoutAJournalAppliesTheGapWhenTheOldProcessEnds(t *testing.T) {
	f := &followed{}
	jf, ended, err := followJournal(filepath.Join(t.TempDir(), journalFile), f.deps())
	if err == nil || ended {
		t.Fatalf("followJournal of no file = ended %v, %v; want an error", ended, err)
	}
	if jf.step() || len(f.gaps) != 0 {
		t.Fatalf("while the old process runs: gaps %v, want none (the load's gap is the daemon's)", f.gaps)
	}
	f.gone = true
	if !jf.step() || len(f.gaps) != 1 {
		t.Fatalf("after the old process ended: gaps %v, want one", f.gaps)
	}
}

func TestFollowerRefusesAJournalThatIsNoRegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, journalFile)
	if err := os.Symlink("/dev/zero", path); err != nil {
		t.Fatal(err)
	}
	f := &followed{}
	if _, _, err := followJournal(path, f.deps()); err == nil {
		t.Fatal("followJournal followed /dev/zero")
	}
}

// On one node the journal is the only record of the purges of the old
// process: a handover load the new process does not follow is a gap.
func TestHandoverLoadNotFollowedIsAGapOnOneNode(t *testing.T) {
	handover := disk.Loaded{Objects: 1, Clean: true, Handover: true}
	if (&daemon{}).loadTrusted(handover, false) {
		t.Error("a handover load whose journal is not followed is trusted")
	}
	if !(&daemon{followed: true}).loadTrusted(handover, false) {
		t.Error("a handover load whose journal is followed is not trusted")
	}
	if !(&daemon{}).loadTrusted(disk.Loaded{Objects: 1, Clean: true}, false) {
		t.Error("a clean stop's load on one node is not trusted")
	}
	if (&daemon{}).loadTrusted(disk.Loaded{Objects: 1}, false) {
		t.Error("a crash's load is trusted")
	}
}

// A process stopped while it still follows (the old one drains on) must
// not leave the journal behind: without a disk tier it is a file in the
// temporary directory that nobody else removes.
func TestFollowerStoppedBeforeTheJournalEndsRemovesIt(t *testing.T) {
	_, path := journalAt(t)
	f := &followed{}
	jf := mustFollow(t, path, f)
	jf.Start(context.Background())
	jf.Close()
	select {
	case <-jf.done:
	default:
		t.Fatal("Close returned before the follower's goroutine ended")
	}
	mustBeGone(t, path, "the journal of a follower that stopped is still there")
}

// A process upgraded again while it still follows its predecessor's
// journal opens its own at the same path: a new file, which its
// follower sees as the old one replaced (a gap, safe), and which neither
// that follower nor the predecessor, failing a write, may remove.
func TestJournalOpenedAgainAtItsPathIsAnotherFileNobodyElseRemoves(t *testing.T) {
	first, path := journalAt(t)
	f := &followed{}
	jf := mustFollow(t, path, f)
	second := &journal{}
	if err := second.open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.close(false) })
	if jf.step() || len(f.gaps) != 1 {
		t.Fatalf("after the path was given to a new journal: gaps %v, want one", f.gaps)
	}
	jf.stopped()
	failAdd(t, first)
	purgeTag(t, second, "b")
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `"b"`) {
		t.Fatalf("the second journal at %s: %q, %v; want its own line", path, b, err)
	}
}
