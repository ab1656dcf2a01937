package conf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is the Watcher's quiet period when Debounce is zero.
const DefaultDebounce = 100 * time.Millisecond

// ErrWatcherStarted is returned by Start on a Watcher already started.
var ErrWatcherStarted = errors.New("conf: watcher already started")

// Watcher calls OnChange after the file at Path was written, created or
// renamed into place, once things have been quiet for Debounce. It watches
// the directory, not the file, because editors and config managers
// replace files by renaming a new one over them; a symlink whose target
// changes (a Kubernetes ConfigMap) also counts. OnChange should re-read
// the file (Load) and may see identical bytes: skip those.
//
// A Watcher is started once; the directory must exist at Start and keep
// existing.
type Watcher struct {
	Path     string        // required
	Debounce time.Duration // zero means DefaultDebounce
	// OnChange is required. It runs on the watcher's goroutine, one call
	// at a time; Close waits for a running call, so it must not call Close.
	OnChange func()
	Logger   *slog.Logger // nil means slog.Default()

	mu       sync.Mutex // guards cancel and done
	cancel   context.CancelFunc
	done     chan struct{} // closed when the goroutine has exited
	closeErr error         // written by the goroutine before done is closed
}

// Start watches until ctx is done or Close is called. It starts one
// goroutine, which Close waits for.
func (w *Watcher) Start(ctx context.Context) error {
	if w.Path == "" || w.OnChange == nil || w.Debounce < 0 {
		return errors.New("conf: watcher needs Path, OnChange and a non-negative Debounce")
	}
	path, err := filepath.Abs(w.Path)
	if err != nil {
		return fmt.Errorf("conf: watch %s: %w", w.Path, err)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("conf: watch %s: %w", w.Path, err)
	}
	if err := fsw.Add(filepath.Dir(path)); err != nil {
		return errors.Join(fmt.Errorf("conf: watch %s: %w", w.Path, err), fsw.Close())
	}
	return w.start(ctx, path, fsw.Events, fsw.Errors, fsw.Close)
}

// start runs loop on events and errs; stop is called when it ends.
func (w *Watcher) start(ctx context.Context, path string, events <-chan fsnotify.Event, errs <-chan error, stop func() error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done != nil {
		return errors.Join(ErrWatcherStarted, stop())
	}
	ctx, w.cancel = context.WithCancel(ctx)
	done := make(chan struct{})
	w.done = done
	t := newTarget(path)
	go func() {
		defer close(done)
		w.loop(ctx, t, events, errs)
		w.closeErr = stop()
	}()
	return nil
}

// Close stops the watcher and waits for its goroutine, including a
// running OnChange. It may be called more than once, and before Start.
func (w *Watcher) Close() error {
	w.mu.Lock()
	cancel, done := w.cancel, w.done
	w.mu.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	<-done
	return w.closeErr
}

// loop debounces relevant events into OnChange calls until ctx is done.
func (w *Watcher) loop(ctx context.Context, t *target, events <-chan fsnotify.Event, errs <-chan error) {
	log := w.Logger
	if log == nil {
		log = slog.Default()
	}
	wait := w.Debounce
	if wait == 0 {
		wait = DefaultDebounce
	}
	timer := time.NewTimer(wait)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if t.changed(ev) {
				timer.Reset(wait) // Go 1.23+ timers: no stale tick after Reset
			}
		case err, ok := <-errs:
			if !ok {
				return
			}
			log.Warn("config watcher", "path", t.path, "err", err)
		case <-timer.C:
			w.OnChange()
		}
	}
}

// target is the watched file and, when it is a symlink, what it resolved
// to last.
type target struct {
	path string // absolute, clean
	real string
}

func newTarget(path string) *target {
	t := &target{path: filepath.Clean(path)}
	t.real, _ = filepath.EvalSymlinks(t.path) // "" if missing: any later resolution is a change
	return t
}

// changed reports whether ev, an event in the target's directory, may
// have changed the file's contents.
func (t *target) changed(ev fsnotify.Event) bool {
	if filepath.Clean(ev.Name) == t.path {
		if ev.Has(fsnotify.Write) || ev.Has(fsnotify.Create) {
			t.real, _ = filepath.EvalSymlinks(t.path) // a failure leaves "", as in newTarget
			return true
		}
		return false
	}
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Rename) && !ev.Has(fsnotify.Remove) {
		return false
	}
	// Another entry changed: the target may be a symlink through it.
	real, err := filepath.EvalSymlinks(t.path)
	if err != nil || real == t.real {
		return false
	}
	t.real = real
	return true
}
