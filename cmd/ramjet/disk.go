package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache/disk"
	"github.com/ramjet-proxy/ramjet/purge"
)

// openDisk loads the disk tier (cache.disk) into the public cache before
// anything is served. The private cache never gets one: per-user entries
// never reach the disk. nil when the tier is off.
func (d *daemon) openDisk() (*disk.Tier, error) {
	dc := d.cfg.Cache.Disk
	if dc.Path == "" {
		return nil, nil
	}
	t, err := disk.Open(disk.Config{Path: dc.Path, Size: int64(dc.Size), RAM: int64(d.cfg.Cache.Size),
		Revive: d.proxy.Revive, Log: d.log}, d.cache)
	if err != nil {
		return nil, err
	}
	t.Register(d.proxy.Metrics().Set())
	l := t.Loaded()
	d.log.Info("disk tier loaded", "path", dc.Path, "objects", l.Objects, "entries", l.Entries,
		"kept_on_disk", l.Kept, "corrupt", l.Corrupt, "expired", l.Expired, "clean", l.Clean, "took", l.Took.Round(time.Millisecond))
	return t, nil
}

// positionFile keeps the fan-out's place in the stream beside the disk
// tier's files; the tier's clean-shutdown marker vouches for both.
const positionFile = "fanout.json"

// resumePosition is where the last clean run stopped reading the fan-out
// stream, or nil. The file is removed: a run that stops without writing
// it again leaves none to trust.
func (d *daemon) resumePosition(t *disk.Tier) *purge.Position {
	if t == nil || d.cfg.Purge.Redis == "" {
		return nil
	}
	path := filepath.Join(d.cfg.Cache.Disk.Path, positionFile)
	b, err := os.ReadFile(path)
	if rmErr := os.Remove(path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		d.log.Warn("disk tier: cannot remove the fan-out position", "err", rmErr)
		return nil
	}
	var p purge.Position
	if err != nil || !t.Loaded().Clean || json.Unmarshal(b, &p) != nil {
		return nil
	}
	return &p
}

// savePosition writes where the fan-out stopped, once it is closed.
func (d *daemon) savePosition() error {
	if d.fan == nil {
		return nil
	}
	p, ok := d.fan.Position()
	if !ok {
		return nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("fan-out position: %w", err)
	}
	path := filepath.Join(d.cfg.Cache.Disk.Path, positionFile)
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		return fmt.Errorf("fan-out position: %w", err)
	}
	return os.Rename(path+".tmp", path) // the tier's Close flushes it with the rest
}

// caughtUpWithin bounds how long a start waits for the fan-out to replay
// what it missed before serving what the disk tier loaded.
const caughtUpWithin = 5 * time.Second

// gapAfterLoad applies the gap policy (purge.gap) to what the disk tier
// loaded when purges may have been missed while the node was down: the
// last run crashed (its last purges may not have reached the disk), or
// the fan-out could not replay the stream from where the last run
// stopped. It runs before the listeners start.
func (d *daemon) gapAfterLoad(t *disk.Tier, resumed bool) {
	l := t.Loaded()
	if d.loadTrusted(l, resumed) {
		return
	}
	why := "the last run did not stop cleanly"
	switch {
	case l.Handover:
		why = "the old process's handover journal cannot be followed"
	case l.Clean:
		why = "purges published by other nodes while this one was down cannot be replayed"
	}
	d.applyGap(d.gapCommand(), "disk tier: what was loaded", why)
}

// gapCommand is the gap policy (purge.gap, purge.gap_grace) as a purge
// of the whole cache.
func (d *daemon) gapCommand() purge.Command {
	return d.gapPolicy().Command(time.Duration(d.cfg.Purge.GapGrace))
}

// gapPolicy is purge.gap as the purge package names it.
func (d *daemon) gapPolicy() purge.GapPolicy {
	if d.cfg.Purge.Gap == "flush" {
		return purge.GapFlush
	}
	return purge.GapStale
}

// applyGap applies cmd (gapCommand) to what may have missed purges, and
// says so: what names it, why says how.
func (d *daemon) applyGap(cmd purge.Command, what, why string) {
	res := d.proxy.Purge(cmd)
	if !cmd.Gap {
		d.log.Warn(what+": flushed", "reason", why)
		return
	}
	d.log.Warn(what+": stale until refreshed", "reason", why, "grace", cmd.Grace, "entries", res.Stale)
}

// loadTrusted reports whether what the tier loaded missed no purge.
func (d *daemon) loadTrusted(l disk.Loaded, resumed bool) bool {
	switch {
	case l.Objects == 0 || d.followed:
		return true
	case !l.Clean:
		return false
	case d.fan != nil:
		return resumed && d.caughtUp() // the stream has every node's purges, the old process's too
	default:
		return !l.Handover // on one node, an upgrade's journal is the only record of the old process's purges
	}
}

// caughtUp waits up to caughtUpWithin for the fan-out to read to the
// stream's end.
func (d *daemon) caughtUp() bool {
	select {
	case <-d.fan.CaughtUp():
		return true
	case <-time.After(caughtUpWithin):
		return false
	}
}

// closeDisk runs after the fan-out and the servers stopped: every purge is
// applied and the stream position final.
func (d *daemon) closeDisk(t *disk.Tier) {
	d.closeShares()
	if d.handedOver {
		// The successor loaded the tier and keeps its own position: this
		// process applies its purges to the files and vouches for nothing.
		if err := t.Leave(); err != nil {
			d.log.Error("disk tier: leaving it to the new process", "err", err)
		}
		return
	}
	if err := d.savePosition(); err != nil {
		d.log.Error("disk tier: fan-out position not kept; the next start treats the cache as a gap", "err", err)
	}
	if err := t.Close(); err != nil {
		d.log.Error("disk tier: not closed cleanly; the next start treats it as a gap", "err", err)
	}
}
