package accesslog

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Stdout as a path writes the lines to the process's standard output.
const Stdout = "stdout"

// Config tunes writers; the zero value is ready to use.
type Config struct {
	// Buffer bounds the bytes of lines waiting for the disk; a line that
	// does not fit is dropped. 0 means 1 MiB: about 80 ms of lines at
	// 100,000 requests a second, for a disk that stalls. A writer holds
	// twice this: the lines being written and those arriving meanwhile.
	Buffer int
	// Delay is how long a line arriving at an idle writer waits for
	// others before they are written together; a half-full buffer is
	// written at once. 0 means 100 ms.
	Delay time.Duration
	// Log gets write and reopen errors; nil discards them.
	Log *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Buffer <= 0 {
		c.Buffer = 1 << 20
	}
	if c.Delay <= 0 {
		c.Delay = 100 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Writer writes the lines of one file (or stdout) from its own goroutine:
// Log copies a line into a bounded buffer and returns, the goroutine
// writes what has gathered. Start it once; Close flushes and waits.
type Writer struct {
	path  string
	cfg   Config
	std   bool // writes stdout, which Close and Reopen leave alone
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	start sync.Once
	close sync.Once
	// dropped counts lines that never reached the file: the buffer was
	// full, the writer closed, or the write failed. set, when not nil,
	// counts them too (the Files the writer belongs to).
	dropped atomic.Uint64
	set     *atomic.Uint64

	// mu guards buf and closed.
	mu     sync.Mutex
	buf    []byte // lines waiting for the goroutine
	closed bool

	// fileMu guards out, shut and failing; the goroutine holds it while
	// it writes, so a reopen never closes a file under a write.
	fileMu   sync.Mutex
	out      *os.File
	shut     bool // closed by Close
	failing  bool // the last write failed: the next error is not logged again
	closeErr error
}

// Open opens the file at path for appending (created 0640 if missing),
// or takes stdout; the writer does not write until Start.
func Open(path string, cfg Config) (*Writer, error) {
	cfg = cfg.withDefaults()
	w := &Writer{path: path, cfg: cfg, std: path == Stdout, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), buf: make([]byte, 0, cfg.Buffer)}
	if w.std {
		w.out = os.Stdout
		return w, nil
	}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	w.out = f
	return w, nil
}

func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("accesslog: %w", err)
	}
	return f, nil
}

// Path is the file the writer was opened on (or Stdout).
func (w *Writer) Path() string { return w.path }

// Start begins writing; later calls do nothing.
func (w *Writer) Start() {
	w.start.Do(func() { go w.loop() })
}

// Log hands over one line (newline included), copied: line may be
// reused at once. It never waits for the disk and allocates nothing;
// when the buffer has no room for the line, the line is dropped and
// counted.
func (w *Writer) Log(line []byte) {
	w.mu.Lock()
	if w.closed || len(w.buf)+len(line) > cap(w.buf) {
		w.mu.Unlock()
		w.drop(1)
		return
	}
	first := len(w.buf) == 0
	w.buf = append(w.buf, line...)
	half := len(w.buf) >= cap(w.buf)/2
	w.mu.Unlock()
	if first || half {
		select {
		case w.kick <- struct{}{}:
		default: // the goroutine has been told already
		}
	}
}

// Dropped is the number of lines that never reached the file.
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

func (w *Writer) drop(n uint64) {
	w.dropped.Add(n)
	if w.set != nil {
		w.set.Add(n)
	}
}

// loop writes what has gathered: a first line waits Delay for others
// (a kick meanwhile means the buffer is half full), then all go in one
// write. On stop it writes what is left.
func (w *Writer) loop() {
	defer close(w.done)
	spare := make([]byte, 0, w.cfg.Buffer)
	t := time.NewTimer(w.cfg.Delay)
	t.Stop()
	for {
		select {
		case <-w.stop:
			w.flush(&spare)
			return
		case <-w.kick:
		}
		if !w.halfFull() {
			t.Reset(w.cfg.Delay)
			select {
			case <-t.C:
			case <-w.kick:
				t.Stop()
			case <-w.stop:
				t.Stop()
				w.flush(&spare)
				return
			}
		}
		w.flush(&spare)
	}
}

func (w *Writer) halfFull() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.buf) >= cap(w.buf)/2
}

// flush swaps the buffer for the empty spare and writes what it held;
// the written buffer becomes the spare.
func (w *Writer) flush(spare *[]byte) {
	w.mu.Lock()
	lines := w.buf
	w.buf = (*spare)[:0]
	w.mu.Unlock()
	if len(lines) > 0 {
		w.write(lines)
	}
	*spare = lines[:0]
}

// write writes lines to the file; what a failed write did not write is
// counted as dropped, and the error logged once per run of failures.
func (w *Writer) write(lines []byte) {
	w.fileMu.Lock()
	defer w.fileMu.Unlock()
	n, err := w.out.Write(lines)
	if err == nil {
		w.failing = false
		return
	}
	lost := uint64(bytes.Count(lines[n:], []byte{'\n'}))
	w.drop(lost)
	if !w.failing {
		w.cfg.Log.Error("access log write failed; dropping lines until a write succeeds", "path", w.path, "lines", lost, "err", err)
	}
	w.failing = true
}

// Reopen opens the file at its path again and writes there from now on:
// after logrotate renamed it, the old file gets no more lines. The old
// file is closed once no write uses it. Stdout is left as it is.
func (w *Writer) Reopen() error {
	if w.std {
		return nil
	}
	f, err := openFile(w.path)
	if err != nil {
		return fmt.Errorf("accesslog: reopen: %w", err)
	}
	w.fileMu.Lock()
	if w.shut {
		w.fileMu.Unlock()
		return f.Close()
	}
	old := w.out
	w.out = f
	w.fileMu.Unlock()
	if err := old.Close(); err != nil {
		return fmt.Errorf("accesslog: reopen: closing the old file: %w", err)
	}
	return nil
}

// Close writes every line logged before it, then closes the file and
// waits for the goroutine. Lines logged after it are dropped. It is
// idempotent.
func (w *Writer) Close() error {
	w.close.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		w.start.Do(func() { close(w.done) }) // never started: nothing to wait for
		close(w.stop)
		<-w.done
		var spare []byte
		w.flush(&spare) // what a writer that never ran was given
		w.fileMu.Lock()
		defer w.fileMu.Unlock()
		w.shut = true
		if !w.std {
			if err := w.out.Close(); err != nil {
				w.closeErr = fmt.Errorf("accesslog: close %s: %w", w.path, err)
			}
		}
	})
	return w.closeErr
}
