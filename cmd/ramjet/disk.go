package main

import (
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

// gapAfterLoad applies the gap policy (purge.gap) to what the disk tier
// loaded when purges may have been missed while the node was down: the
// last run crashed (its last purges may not have reached the disk), or
// purges come through the fan-out, whose stream position is not kept.
func (d *daemon) gapAfterLoad(t *disk.Tier) {
	l := t.Loaded()
	if l.Objects == 0 || l.Clean && d.cfg.Purge.Redis == "" {
		return
	}
	why := "the last run did not stop cleanly"
	if l.Clean {
		why = "purges published by other nodes while this one was down cannot be replayed"
	}
	if d.cfg.Purge.Gap == "flush" {
		d.cache.PurgeAll(false, 0)
		d.log.Warn("disk tier: flushed what was loaded", "reason", why)
		return
	}
	grace := time.Duration(d.cfg.Purge.GapGrace)
	if grace <= 0 {
		grace = 10 * time.Second
	}
	res := d.proxy.Purge(purge.Command{Targets: []purge.Target{{Kind: purge.KindAll, Soft: true}}, Gap: true, Grace: grace})
	d.log.Warn("disk tier: what was loaded is stale until refreshed", "reason", why, "grace", grace, "entries", res.Stale)
}

func (d *daemon) closeDisk(t *disk.Tier) {
	if err := t.Close(); err != nil {
		d.log.Error("disk tier: not closed cleanly; the next start treats it as a gap", "err", err)
	}
}
