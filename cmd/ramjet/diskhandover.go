package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache/disk"
	"github.com/ramjet-proxy/ramjet/purge"
)

// An upgrade keeps the disk tier trusted: before it starts the new
// binary, this process has its tiers apply every queued purge and leave a
// handover marker (disk.Tier.Checkpoint), and journals every purge it
// applies from then on (handover.jsonl) until it exits. The new process
// loads the files as after a clean stop, applies the journal before it
// says it serves, and follows it until the old process ends: a purge
// that reaches the old process while both run (a PURGE on a kept
// connection, an origin's purge header, the fan-out) reaches the new
// one's cache too, and no page is fetched again for an upgrade.

const journalFile = "handover.jsonl"

// journal is the old process's side: the purges it applies once open.
type journal struct {
	mu sync.Mutex // guards f
	f  *os.File   // nil: not journaling
}

// journalLine is one purge; the last line says the old process ended.
type journalLine struct {
	Cmd    *purge.Command `json:"cmd,omitempty"`
	Before int64          `json:"before,omitempty"`
	Grace  time.Duration  `json:"grace,omitempty"`
	End    bool           `json:"end,omitempty"`
}

func (j *journal) open(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("handover journal: %w", err)
	}
	j.mu.Lock()
	j.f = f
	j.mu.Unlock()
	return nil
}

// add writes l as one line (one write: the reader sees whole lines).
func (j *journal) add(l journalLine) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("handover journal: %w", err)
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("handover journal: %w", err)
	}
	return nil
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
		// The successor may miss this purge: it must treat its load as a gap.
		j.d.log.Error("upgrade: a purge did not reach the handover journal", "err", err)
	}
	return j.d.proxy.Purge(cmd)
}

// checkpoint readies the disk tiers for the new process and opens the
// journal; on false the new process treats what it loads as a gap.
func (d *daemon) checkpoint() bool {
	if d.tier == nil {
		return false
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
	for _, t := range d.allTiers() {
		if err := t.Uncheckpoint(); err != nil {
			d.log.Warn("upgrade: removing the handover marker", "err", err)
		}
	}
	if err := d.journal.close(false); err != nil {
		d.log.Warn("upgrade: closing the handover journal", "err", err)
	}
	_ = os.Remove(filepath.Join(d.cfg.Cache.Disk.Path, journalFile)) // best effort: truncated at the next upgrade
}

// followJournal applies the old process's journal: what is there before
// it returns, the rest as it comes, until the old process wrote its end
// or is gone (ctx ends it too).
func (d *daemon) followJournal(ctx context.Context) error {
	path := filepath.Join(d.cfg.Cache.Disk.Path, journalFile)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("handover journal: %w", err)
	}
	old := os.Getppid()
	r := &follower{r: bufio.NewReader(f)}
	ended, err := d.applyJournal(r)
	if err != nil || ended {
		return errors.Join(err, f.Close(), os.Remove(path))
	}
	go func() {
		defer f.Close()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			// Gone: reaped, or exited and this process handed to another
			// parent (a zombie nobody reaps still answers kill 0).
			gone := syscall.Kill(old, 0) == syscall.ESRCH || os.Getppid() != old
			ended, err := d.applyJournal(r)
			if err != nil {
				d.log.Error("upgrade: the handover journal", "err", err)
			}
			if ended || gone || err != nil {
				_ = os.Remove(path) // best effort: truncated at the next upgrade
				return
			}
		}
	}()
	return nil
}

// follower reads the journal as it grows: half a line read waits for
// its rest.
type follower struct {
	r    *bufio.Reader
	half []byte
}

// applyJournal applies the whole lines r has now; it reports the end.
func (d *daemon) applyJournal(r *follower) (bool, error) {
	for {
		b, err := r.r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			r.half = append(r.half, b...)
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("handover journal: %w", err)
		}
		if len(r.half) > 0 {
			b, r.half = append(r.half, b...), nil
		}
		var l journalLine
		if err := json.Unmarshal(b, &l); err != nil {
			return false, fmt.Errorf("handover journal: %w", err)
		}
		if l.End {
			return true, nil
		}
		if l.Cmd != nil {
			l.Cmd.Before, l.Cmd.Grace = l.Before, l.Grace
			d.proxy.Purge(*l.Cmd)
		}
	}
}

// followPredecessor follows the journal of the process this one took
// over from, when its tiers say so; a journal it cannot read leaves the
// load to the gap policy (d.followed false).
func (d *daemon) followPredecessor(ctx context.Context) error {
	if !d.tier.Loaded().Handover {
		return nil
	}
	if err := d.followJournal(ctx); err != nil {
		d.log.Warn("upgrade: the disk tier is treated as a gap", "err", err)
		return nil
	}
	d.followed = true
	return nil
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
