package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache/disk"
	"github.com/ramjet-proxy/ramjet/purge"
)

// An upgrade loses no purge: before it starts the new binary, this
// process has its disk tiers apply every queued purge and leave a
// handover marker (disk.Tier.Checkpoint), and journals every purge it
// applies from then on until it exits (handover.jsonl in the tier's
// directory; without a tier, a file of its own in the temporary
// directory, which the new process's RAM cache needs as much: a page
// it caches while the old one drains may be purged there, by an
// origin's purge header on a request in flight or a PURGE on a kept
// connection). The new process loads the tier's files as after a clean
// stop, applies the journal before it says it serves, and follows it
// until the old process ends (handoverfollow.go); without Redis it is
// the only way those purges reach it, and no page is fetched again for
// an upgrade.

const journalFile = "handover.jsonl"

// journal is the old process's side: the purges it applies once open.
type journal struct {
	mu   sync.Mutex // guards f and path
	f    *os.File   // nil: not journaling
	path string
}

// journalLine is one purge; the last line says the old process ended.
type journalLine struct {
	Cmd    *purge.Command `json:"cmd,omitempty"`
	Before int64          `json:"before,omitempty"`
	Grace  time.Duration  `json:"grace,omitempty"`
	End    bool           `json:"end,omitempty"`
}

// open starts the journal in a new file: at path, or, path empty, in
// the temporary directory. Never an existing file: a follower of the
// last upgrade's journal at path (this process, upgraded again while
// its predecessor drains) must see it replaced, not rewritten.
func (j *journal) open(path string) error {
	var f *os.File
	var err error
	if path == "" {
		f, err = os.CreateTemp("", "ramjet-handover-*.jsonl")
	} else if err = os.Remove(path); err == nil || errors.Is(err, os.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	if err != nil {
		return fmt.Errorf("handover journal: %w", err)
	}
	j.mu.Lock()
	j.f, j.path = f, f.Name()
	j.mu.Unlock()
	return nil
}

// name is the journal's path while it is open, for the new process.
func (j *journal) name() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return ""
	}
	return j.path
}

// add writes l as one line (one write: the reader sees whole lines).
// When it cannot (a full disk), the successor must not go on trusting
// the journal: add removes it, which needs no space, and the successor
// applies the gap policy when it sees the name gone (handoverfollow.go).
// Nothing is journaled after that.
func (j *journal) add(l journalLine) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	b, err := json.Marshal(l)
	if err == nil {
		_, err = j.f.Write(append(b, '\n'))
	}
	if err == nil {
		return nil
	}
	err = errors.Join(fmt.Errorf("handover journal: %w", err), j.removeOwn(), j.f.Close())
	j.f = nil
	return err
}

// removeOwn removes the journal's name, unless it names another file by
// now (the next upgrade's journal, at the same path).
func (j *journal) removeOwn() error {
	own, err := j.f.Stat()
	if err != nil {
		return fmt.Errorf("handover journal: %w", err)
	}
	if named, err := os.Stat(j.path); err != nil || !os.SameFile(own, named) {
		return nil // gone already, or another's
	}
	return os.Remove(j.path)
}

// close ends the journal; end says the successor may stop following.
func (j *journal) close(end bool) error {
	var err error
	if end {
		err = j.add(journalLine{End: true})
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		err = errors.Join(err, j.f.Close())
		j.f = nil
	}
	return err
}

// journaled is the local Invalidator of the hub and the fan-out: a
// purge is journaled, then applied.
type journaled struct{ d *daemon }

func (j journaled) Purge(cmd purge.Command) purge.Result {
	if err := j.d.journal.add(journalLine{Cmd: &cmd, Before: cmd.Before, Grace: cmd.Grace}); err != nil {
		// The journal is gone: the successor treats its cache as a gap.
		j.d.log.Error("upgrade: a purge did not reach the handover journal; the new process treats its cache as a gap", "err", err)
	}
	return j.d.proxy.Purge(cmd)
}

// checkpoint opens the journal and readies the disk tiers for the new
// process; on false the new process treats what it loads as a gap.
func (d *daemon) checkpoint() bool {
	if d.tier == nil {
		if err := d.journal.open(""); err != nil {
			d.log.Warn("upgrade: no handover journal; a purge this process applies while it drains will not reach the new one", "err", err)
			return false
		}
		return true
	}
	if err := d.journal.open(filepath.Join(d.cfg.Cache.Disk.Path, journalFile)); err != nil {
		d.log.Warn("upgrade: the new process treats the disk tier as a gap", "err", err)
		return false
	}
	for _, t := range d.allTiers() {
		if err := t.Checkpoint(); err != nil {
			d.uncheckpoint()
			d.log.Warn("upgrade: the new process treats the disk tier as a gap", "err", err)
			return false
		}
	}
	return true
}

// uncheckpoint undoes checkpoint after a failed upgrade.
func (d *daemon) uncheckpoint() {
	if d.tier != nil {
		for _, t := range d.allTiers() {
			if err := t.Uncheckpoint(); err != nil {
				d.log.Warn("upgrade: removing the handover marker", "err", err)
			}
		}
	}
	path := d.journal.name()
	if err := d.journal.close(false); err != nil {
		d.log.Warn("upgrade: closing the handover journal", "err", err)
	}
	if path != "" {
		_ = os.Remove(path) // best effort: truncated at the next upgrade, or a temporary file
	}
}

// endJournal ends an upgrade's journal once this process drained and
// its disk tier, if any, is left to the new one: every purge it applied
// is there, and the new process stops following.
func (d *daemon) endJournal() {
	if !d.handedOver {
		return
	}
	if err := d.journal.close(true); err != nil {
		d.log.Error("upgrade: ending the handover journal; the new process follows it until this one is gone", "err", err)
	}
}

// followPredecessor follows the journal of the process this one took
// over from (handoverfollow.go): the one it named, or, with a disk tier
// loaded from a handover, the tier's (an older version names none). A
// journal it cannot read leaves the load to the gap policy (d.followed
// false), and the gap is applied again when the old process ends. The
// follower it returns, if any, runs until Close.
func (d *daemon) followPredecessor(ctx context.Context) *journalFollower {
	handover := d.tier != nil && d.tier.Loaded().Handover
	path := d.socks.journal
	if path == "" && handover {
		path = filepath.Join(d.cfg.Cache.Disk.Path, journalFile)
	}
	if path == "" {
		return nil // no upgrade, or the old process could not open a journal
	}
	jf, ended, err := followJournal(path, d.followerDeps())
	if err != nil {
		d.log.Warn("upgrade: the handover journal cannot be followed; the cache is a gap", "err", err)
	}
	// Only a handover's load is vouched for by the journal; another is
	// judged as any start's (gapAfterLoad).
	d.followed = err == nil && handover
	if !ended {
		jf.Start(ctx)
	}
	return jf
}

// followerDeps acts for the follower on this process's cache. The gap
// policy is read now: the follower runs beside reloads.
func (d *daemon) followerDeps() followerDeps {
	cmd := d.gapCommand()
	return followerDeps{
		apply: func(c purge.Command) { d.proxy.Purge(c) },
		gap:   func(why string) { d.applyGap(cmd, "upgrade: the cache is treated as a gap", why) },
		gone:  oldProcessGone(),
		log:   d.log,
	}
}

// allTiers are the shared cache's tier and the sites' own.
func (d *daemon) allTiers() []*disk.Tier {
	out := []*disk.Tier{d.tier}
	d.shares.mu.Lock()
	defer d.shares.mu.Unlock()
	for _, st := range d.shares.tiers {
		out = append(out, st.Tier)
	}
	return out
}
