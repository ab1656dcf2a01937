package accesslog

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Files are the open writers, one per path, counted by their users (the
// config generations that name them): a path named again is shared, not
// opened twice, and a writer closes when its last user releases it. The
// zero value is not usable; make one with NewFiles.
type Files struct {
	cfg Config
	// dropped counts what every writer, open or closed, dropped.
	dropped atomic.Uint64

	// mu guards open.
	mu   sync.Mutex
	open map[string]*user
}

type user struct {
	w    *Writer
	refs int
}

// NewFiles returns an empty set whose writers use cfg.
func NewFiles(cfg Config) *Files {
	return &Files{cfg: cfg, open: make(map[string]*user)}
}

// Acquire returns the started writer of path, opening it on first use;
// each call needs a Release.
func (fs *Files) Acquire(path string) (*Writer, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if u, ok := fs.open[path]; ok {
		u.refs++
		return u.w, nil
	}
	w, err := Open(path, fs.cfg)
	if err != nil {
		return nil, err
	}
	w.set = &fs.dropped
	w.Start()
	fs.open[path] = &user{w: w, refs: 1}
	return w, nil
}

// Release gives up one use of w; the last one closes it, after writing
// every line it was given.
func (fs *Files) Release(w *Writer) error {
	fs.mu.Lock()
	u, ok := fs.open[w.path]
	if !ok || u.w != w {
		fs.mu.Unlock()
		return fmt.Errorf("accesslog: release of %s, which is not open", w.path)
	}
	if u.refs--; u.refs > 0 {
		fs.mu.Unlock()
		return nil
	}
	delete(fs.open, w.path)
	fs.mu.Unlock()
	return w.Close() // outside the lock: it waits for the disk
}

// Reopen opens every file again at its path (after logrotate moved it).
// A file that fails keeps its writer on the old file; every failure is
// returned.
func (fs *Files) Reopen() error {
	var errs []error
	for _, w := range fs.writers() {
		if err := w.Reopen(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Dropped is the number of lines every writer, open or closed, dropped.
func (fs *Files) Dropped() uint64 { return fs.dropped.Load() }

// Close closes every writer, whoever still uses it: it is for the end of
// the process, after the last request.
func (fs *Files) Close() error {
	var errs []error
	for _, w := range fs.writers() {
		errs = append(errs, w.Close())
	}
	fs.mu.Lock()
	clear(fs.open)
	fs.mu.Unlock()
	return errors.Join(errs...)
}

func (fs *Files) writers() []*Writer {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]*Writer, 0, len(fs.open))
	for _, u := range fs.open {
		out = append(out, u.w)
	}
	return out
}
