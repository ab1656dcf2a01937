package conf

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
)

var quiet = slog.New(slog.DiscardHandler)

func TestWatcherSeesEditorStyleChanges(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, dir, path string) // before Start
		change func(t *testing.T, dir, path string)
	}{
		{"write in place", nil, func(t *testing.T, dir, path string) {
			writeFile(t, path, "listen: \":2\"\n")
		}},
		{"rename a new file over it", nil, func(t *testing.T, dir, path string) {
			tmp := filepath.Join(dir, ".ramjet.yaml.swp")
			writeFile(t, tmp, "listen: \":2\"\n")
			rename(t, tmp, path)
		}},
		{"move away, then write anew", nil, func(t *testing.T, dir, path string) {
			rename(t, path, path+"~")
			writeFile(t, path, "listen: \":2\"\n")
		}},
		{"symlink target swapped (Kubernetes ConfigMap)", setupConfigMap, func(t *testing.T, dir, path string) {
			writeFile(t, filepath.Join(dir, "v2", "ramjet.yaml"), "listen: \":2\"\n")
			symlink(t, "v2", filepath.Join(dir, "..data_tmp"))
			rename(t, filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ramjet.yaml")
			if tt.setup != nil {
				tt.setup(t, dir, path)
			} else {
				writeFile(t, path, "listen: \":1\"\n")
			}
			changed := make(chan struct{}, 1)
			w := &Watcher{Path: path, Debounce: 10 * time.Millisecond, Logger: quiet, OnChange: func() {
				select {
				case changed <- struct{}{}:
				default:
				}
			}}
			if err := w.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			tt.change(t, dir, path)
			select {
			case <-changed:
			case <-time.After(5 * time.Second):
				t.Fatal("OnChange was not called")
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close() = %v", err)
			}
		})
	}
}

// setupConfigMap lays out dir like a mounted Kubernetes ConfigMap:
// ramjet.yaml -> ..data/ramjet.yaml, ..data -> v1.
func setupConfigMap(t *testing.T, dir, path string) {
	for _, v := range []string{"v1", "v2"} {
		if err := os.Mkdir(filepath.Join(dir, v), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "v1", "ramjet.yaml"), "listen: \":1\"\n")
	symlink(t, "v1", filepath.Join(dir, "..data"))
	symlink(t, filepath.Join("..data", "ramjet.yaml"), path)
}

func rename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestWatcherFiltersEvents(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ramjet.yaml")
	other := filepath.Join(dir, "other.yaml")
	writeFile(t, path, "")
	tests := []struct {
		name string
		ev   fsnotify.Event
		want bool
	}{
		{"write", fsnotify.Event{Name: path, Op: fsnotify.Write}, true},
		{"create (renamed into place)", fsnotify.Event{Name: path, Op: fsnotify.Create}, true},
		{"chmod", fsnotify.Event{Name: path, Op: fsnotify.Chmod}, false},
		{"removed", fsnotify.Event{Name: path, Op: fsnotify.Remove}, false},
		{"renamed away", fsnotify.Event{Name: path, Op: fsnotify.Rename}, false},
		{"other file written", fsnotify.Event{Name: other, Op: fsnotify.Write}, false},
		{"other file created", fsnotify.Event{Name: other, Op: fsnotify.Create}, false},
		{"unclean name", fsnotify.Event{Name: dir + "/./ramjet.yaml", Op: fsnotify.Write}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newTarget(path).changed(tt.ev); got != tt.want {
				t.Fatalf("changed(%v) = %v, want %v", tt.ev, got, tt.want)
			}
		})
	}
}

func TestWatcherSeesSymlinkRetargetOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ramjet.yaml")
	setupConfigMap(t, dir, path)
	tg := newTarget(path)
	ev := fsnotify.Event{Name: filepath.Join(dir, "..data"), Op: fsnotify.Create}
	if tg.changed(ev) {
		t.Fatal("changed before the link moved")
	}
	writeFile(t, filepath.Join(dir, "v2", "ramjet.yaml"), "")
	if err := os.Remove(filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "v2", filepath.Join(dir, "..data"))
	if !tg.changed(ev) {
		t.Fatal("retargeted link not seen")
	}
	if tg.changed(ev) {
		t.Fatal("same target seen as a change twice")
	}
}

// startFake starts w on channels the test feeds instead of fsnotify.
func startFake(t *testing.T, w *Watcher) chan<- fsnotify.Event {
	t.Helper()
	events := make(chan fsnotify.Event)
	if err := w.start(t.Context(), w.Path, events, make(chan error), func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	return events
}

// In these synctest bubbles time is fake: time.Sleep advances the clock
// and synctest.Wait waits until every goroutine is blocked.
func TestWatcherDebouncesBurstIntoOneCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		w := &Watcher{Path: "/etc/ramjet/ramjet.yaml", Debounce: 100 * time.Millisecond, Logger: quiet,
			OnChange: func() { calls.Add(1) }}
		events := startFake(t, w)
		write := fsnotify.Event{Name: w.Path, Op: fsnotify.Write}
		for range 5 {
			events <- write
			time.Sleep(60 * time.Millisecond)
		}
		synctest.Wait()
		if n := calls.Load(); n != 0 {
			t.Fatalf("OnChange called %d times during the burst", n)
		}
		time.Sleep(41 * time.Millisecond)
		synctest.Wait()
		if n := calls.Load(); n != 1 {
			t.Fatalf("OnChange called %d times after the burst, want 1", n)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := calls.Load(); n != 1 {
			t.Fatalf("OnChange called %d times an hour later, want 1", n)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWatcherCloseWaitsForOnChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		var finished atomic.Bool
		w := &Watcher{Path: "/etc/ramjet/ramjet.yaml", Logger: quiet, OnChange: func() {
			close(entered)
			<-release
			finished.Store(true)
		}}
		events := startFake(t, w)
		events <- fsnotify.Event{Name: w.Path, Op: fsnotify.Create}
		<-entered
		closed := make(chan struct{})
		go func() {
			w.Close()
			close(closed)
		}()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while OnChange was running")
		default:
		}
		close(release)
		<-closed
		if !finished.Load() {
			t.Fatal("Close returned before OnChange finished")
		}
	})
}

func TestWatcherStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stopped := make(chan struct{})
		ctx, cancel := context.WithCancel(t.Context())
		w := &Watcher{Path: "/etc/ramjet/ramjet.yaml", Logger: quiet, OnChange: func() {}}
		err := w.start(ctx, w.Path, make(chan fsnotify.Event), make(chan error), func() error {
			close(stopped)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		<-stopped
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWatcherCloseIsIdempotent(t *testing.T) {
	var never Watcher
	if err := never.Close(); err != nil {
		t.Fatalf("Close before Start = %v", err)
	}
	w := &Watcher{Path: filepath.Join(t.TempDir(), "ramjet.yaml"), Logger: quiet, OnChange: func() {}}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.Close(); err != nil {
			t.Fatalf("Close #%d = %v", i+1, err)
		}
	}
}

func TestWatcherStartRejectsMisuse(t *testing.T) {
	dir := t.TempDir()
	started := &Watcher{Path: filepath.Join(dir, "a.yaml"), OnChange: func() {}}
	if err := started.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { started.Close() })
	tests := []struct {
		name string
		w    *Watcher
		is   error
	}{
		{"no path", &Watcher{OnChange: func() {}}, nil},
		{"no OnChange", &Watcher{Path: filepath.Join(dir, "a.yaml")}, nil},
		{"negative debounce", &Watcher{Path: filepath.Join(dir, "a.yaml"), OnChange: func() {}, Debounce: -1}, nil},
		{"missing directory", &Watcher{Path: filepath.Join(dir, "nope", "a.yaml"), OnChange: func() {}}, os.ErrNotExist},
		{"started twice", started, ErrWatcherStarted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.w.Start(t.Context())
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("Start() = %v, want an error (is %v)", err, tt.is)
			}
		})
	}
}
