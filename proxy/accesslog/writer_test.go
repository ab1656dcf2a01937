package accesslog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func line(i int) []byte { return fmt.Appendf(nil, "line %06d\n", i) }

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func openStarted(t *testing.T, path string, cfg Config) *Writer {
	t.Helper()
	w, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	t.Cleanup(func() { w.Close() })
	return w
}

func TestCloseWritesEveryLoggedLineInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	w := openStarted(t, path, Config{Delay: time.Hour}) // only Close and half-full buffers write
	const n = 10000
	for i := range n {
		w.Log(line(i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, path)
	if len(got) != n || w.Dropped() != 0 {
		t.Fatalf("%d lines in the file, %d dropped, want %d and 0", len(got), w.Dropped(), n)
	}
	for i, l := range got {
		if l+"\n" != string(line(i)) {
			t.Fatalf("line %d is %q", i, l)
		}
	}
}

// fifo makes a named pipe and opens its read end, so that the writer's
// writes block once the pipe holds 64 KiB: a disk that does not keep up.
func fifo(t *testing.T) (string, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "slow.log")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(int(r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return path, r
}

// TestSlowDiskDropsLinesInsteadOfBlocking: with the file not taking
// writes, Log keeps returning, the lines past the buffer are counted as
// dropped, and once the disk takes them again every line not dropped
// arrives.
func TestSlowDiskDropsLinesInsteadOfBlocking(t *testing.T) {
	path, r := fifo(t)
	w := openStarted(t, path, Config{Buffer: 4 << 10, Delay: time.Millisecond})
	const n = 100000 // 1.2 MB: far beyond the pipe and the buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			w.Log(line(i))
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Log blocked on a disk that does not take writes")
	}
	if w.Dropped() == 0 {
		t.Fatal("no line dropped, though the disk took none for a while")
	}
	read := make(chan int)
	go func() {
		n := 0
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			n++
		}
		read <- n
	}()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := <-read; uint64(got)+w.Dropped() != n {
		t.Errorf("%d lines arrived and %d were dropped, want %d in all", got, w.Dropped(), n)
	}
}

// TestIdleWriterWritesWithinTheDelay: a lone line does not wait for the
// buffer to fill.
func TestIdleWriterWritesWithinTheDelay(t *testing.T) {
	path, r := fifo(t)
	w := openStarted(t, path, Config{Delay: 10 * time.Millisecond})
	w.Log(line(1))
	got := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(r).ReadString('\n')
		got <- l
	}()
	select {
	case l := <-got:
		if l != string(line(1)) {
			t.Errorf("read %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a lone line was not written")
	}
}

// TestReopenWritesToTheFileNowAtThePath: logrotate renames the file,
// then asks for a reopen; lines after it go to the new file, none lost.
func TestReopenWritesToTheFileNowAtThePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	w := openStarted(t, path, Config{})
	w.Log(line(1))
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	w.Log(line(2)) // still the renamed file's
	if err := w.Reopen(); err != nil {
		t.Fatal(err)
	}
	w.Log(line(3))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	old, cur := readLines(t, path+".1"), readLines(t, path)
	all := append(old, cur...)
	if len(all) != 3 || len(cur) == 0 || cur[len(cur)-1] != "line 000003" {
		t.Errorf("rotated file %q, new file %q: want lines 1-3 across them, 3 in the new one", old, cur)
	}
}

func TestLogAfterCloseIsDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	w := openStarted(t, path, Config{})
	w.Close()
	w.Log(line(1))
	if w.Dropped() != 1 {
		t.Errorf("dropped %d, want 1", w.Dropped())
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestFailedWriteCountsItsLinesAndLogsOnce: a file that cannot be written
// (here: opened on a closed descriptor) costs its lines, counted.
func TestFailedWriteCountsItsLinesAndLogsOnce(t *testing.T) {
	var logged bytes.Buffer
	path := filepath.Join(t.TempDir(), "access.log")
	w, err := Open(path, Config{Log: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w.out.Close() // every write fails from now on
	w.write(append(line(1), line(2)...))
	w.write(line(3))
	if w.Dropped() != 3 {
		t.Errorf("dropped %d, want 3", w.Dropped())
	}
	if n := strings.Count(logged.String(), "access log write failed"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logged.String())
	}
	if err := w.Close(); err == nil {
		t.Error("Close of an already closed file reported no error")
	}
}

func TestOpenFailsOnAMissingDirectory(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "nope", "access.log"), Config{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open: %v, want a not-exist error", err)
	}
}
