package certs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Start watches the directories of every configured file and reloads on
// change, and runs the OCSP loop. Close stops both.
func (s *Store) Start(ctx context.Context) error {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.done != nil {
		return errors.New("certs: already started")
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("certs: watcher: %w", err)
	}
	// Directories, not files: editors and cert tools replace files by
	// rename, and Kubernetes swaps a symlinked directory, both of which
	// a watch on the file itself would lose.
	for _, dir := range s.dirs() {
		if err := w.Add(dir); err != nil {
			_ = w.Close() // the Add error is the one worth reporting
			return fmt.Errorf("certs: watch %s: %w", dir, err)
		}
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.watchLoop(ctx, w) }()
	go func() { defer wg.Done(); s.ocspLoop(ctx) }()
	go func() { wg.Wait(); close(s.done) }()
	return nil
}

// Close stops the watcher and the OCSP loop and waits for them. It is
// idempotent and safe without Start.
func (s *Store) Close() error {
	s.runMu.Lock()
	cancel, done := s.cancel, s.done
	s.runMu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
	return nil
}

func (s *Store) dirs() []string {
	seen := make(map[string]bool)
	var dirs []string
	add := func(p Pair) {
		for _, f := range []string{p.CertFile, p.KeyFile} {
			if f == "" {
				continue
			}
			d := filepath.Dir(f)
			if !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	add(s.cfg.Default)
	for _, p := range s.cfg.Hosts {
		add(p)
	}
	return dirs
}

// watchLoop reloads once file events have been quiet for cfg.Debounce.
// It owns w and closes it.
func (s *Store) watchLoop(ctx context.Context, w *fsnotify.Watcher) {
	defer func() {
		if err := w.Close(); err != nil {
			s.log.Warn("certs: close watcher", "err", err)
		}
	}()
	debounce := time.NewTimer(0)
	if !debounce.Stop() {
		<-debounce.C
	}
	for {
		select {
		case <-ctx.Done():
			debounce.Stop()
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Chmod) && !ev.Has(fsnotify.Write|fsnotify.Create|fsnotify.Rename|fsnotify.Remove) {
				continue
			}
			debounce.Reset(s.cfg.Debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.log.Warn("certs: watcher", "err", err)
		case <-debounce.C:
			if err := s.Reload(); err != nil {
				s.log.Error("certificate reload", "err", err)
			}
		}
	}
}
