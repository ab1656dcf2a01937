package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/cache/disk"
)

// A site with hosts[].cache_size has a cache of its own; with the disk
// tier on it has a disk tier of its own too, under sites/ in
// cache.disk.path, bounded to the same share of cache.disk.size as its
// cache_size is of cache.size: another site's pages never push its pages
// off the disk, as they never push them out of RAM.

// shares are the sites' own disk tiers.
type shares struct {
	mu     sync.Mutex // guards the fields below
	opened bool       // the shared tier is loaded: a new share opens at once
	tiers  map[*cache.Cache]*shareTier
	wait   []pendingShare // made before the shared tier was loaded
	// series is which tier each site's labelled series read (the newest
	// opened for it; diskshare_metrics.go).
	series map[string]*siteSeries
	// The settings the tiers were opened with (cache.disk applies at
	// the next restart).
	disk conf.Disk
	ram  int64
}

type pendingShare struct {
	label string
	c     *cache.Cache
}

// shareTier is a site's own disk tier. The proxy closes a share's cache
// when no site uses it any more: its files are then deleted (purges of
// the site no longer reach them). At the process's end closeDisk closes
// it first, keeping the files.
type shareTier struct {
	*disk.Tier
	dir   string
	ended bool // closed by closeDisk; guarded by shares.mu
	d     *daemon
	label string // its site's
}

// Close drops the tier unless the process ends.
func (s *shareTier) Close() error {
	s.d.shares.mu.Lock()
	ended := s.ended
	s.ended = true
	if !ended {
		s.d.shares.unregister(s, s.d.proxy.Metrics().Set())
	}
	s.d.shares.mu.Unlock()
	if ended {
		return nil
	}
	if err := s.Leave(); err != nil {
		return err
	}
	return os.RemoveAll(s.dir)
}

// newShare is proxy.Stores.NewShare: the site's cache, and its disk tier
// once the shared one is loaded.
func (d *daemon) newShare(label string, size int64) (*cache.Cache, error) {
	c, err := cache.New(cache.Config{Size: size})
	d.shares.mu.Lock()
	opened := d.shares.opened
	if !opened {
		d.shares.disk, d.shares.ram = d.cfg.Cache.Disk, int64(d.cfg.Cache.Size)
	}
	if err != nil || d.shares.disk.Path == "" {
		d.shares.mu.Unlock()
		return c, err
	}
	if !opened {
		d.shares.wait = append(d.shares.wait, pendingShare{label, c})
	}
	d.shares.mu.Unlock()
	if opened {
		// Made by a reload: the share starts empty on disk as in RAM;
		// files left from before missed the purges since.
		if err := d.openShare(label, c, true); err != nil {
			_ = c.Close() // never used
			return nil, err
		}
	}
	return c, nil
}

// openShares opens the tiers of the shares the first generation made,
// after the shared tier is loaded (their entries revive through the
// proxy).
func (d *daemon) openShares() error {
	d.shares.mu.Lock()
	wait := d.shares.wait
	d.shares.wait, d.shares.opened = nil, true
	d.shares.disk, d.shares.ram = d.cfg.Cache.Disk, int64(d.cfg.Cache.Size)
	d.shares.mu.Unlock()
	for _, p := range wait {
		if err := d.openShare(p.label, p.c, false); err != nil {
			return err
		}
	}
	return nil
}

// openShare opens the share's tier; fresh empties its directory first. A
// share that did not stop cleanly is emptied too: its last purges may
// not have reached the disk.
func (d *daemon) openShare(label string, c *cache.Cache, fresh bool) error {
	d.shares.mu.Lock()
	dc, total := d.shares.disk, d.shares.ram
	d.shares.mu.Unlock()
	dir := filepath.Join(dc.Path, "sites", url.PathEscape(label))
	if fresh {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("disk tier of %s: %w", label, err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("disk tier of %s: %w", label, err)
	}
	ram := int64(c.Size())
	t, err := disk.Open(disk.Config{Path: dir, Size: shareOnDisk(ram, total, int64(dc.Size)), RAM: ram,
		Revive: d.proxy.Revive, Log: d.log.With("site", label)}, c)
	if err != nil {
		return fmt.Errorf("disk tier of %s: %w", label, err)
	}
	st := &shareTier{Tier: t, dir: dir, d: d, label: label}
	c.SetLower(st)
	if l := t.Loaded(); !l.Clean {
		c.PurgeAll(false, 0) // its files go with it
		d.log.Warn("disk tier: a site's own share did not stop cleanly; emptied", "site", label)
	}
	t.Start(context.Background()) // stopped by Close
	d.shares.mu.Lock()
	if d.shares.tiers == nil {
		d.shares.tiers = map[*cache.Cache]*shareTier{}
	}
	d.shares.tiers[c] = st
	d.shares.register(st, d.proxy.Metrics().Set())
	d.shares.mu.Unlock()
	return nil
}

// shareOnDisk is a site's bound on disk: the share of the disk tier its
// cache_size is of cache.size, at least 1 MiB.
func shareOnDisk(share, ram, onDisk int64) int64 {
	return max(int64(float64(share)/float64(ram)*float64(onDisk)), 1<<20)
}

// closeShares closes every share's tier, keeping its files (Leave when
// an upgrade's successor took them over).
func (d *daemon) closeShares() {
	d.shares.mu.Lock()
	var open []*shareTier
	for _, st := range d.shares.tiers {
		if !st.ended {
			st.ended = true
			open = append(open, st)
		}
	}
	d.shares.mu.Unlock()
	for _, st := range open {
		if d.handedOver {
			err := st.Leave()
			d.logIf(err, "disk tier: leaving a site's share to the new process", st.dir)
			continue
		}
		d.logIf(st.Tier.Close(), "disk tier: a site's share not closed cleanly; the next start empties it", st.dir)
	}
}

func (d *daemon) logIf(err error, msg, dir string) {
	if err != nil {
		d.log.Error(msg, "dir", dir, "err", err)
	}
}
