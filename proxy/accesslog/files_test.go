package accesslog

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSharedPathIsOneWriterClosedByItsLastUser: two users of a path share
// the writer; it stays open until both released it, and its lines are in
// the file when the last one did.
func TestSharedPathIsOneWriterClosedByItsLastUser(t *testing.T) {
	fs := NewFiles(Config{})
	t.Cleanup(func() { fs.Close() })
	path := filepath.Join(t.TempDir(), "shared.log")
	a, err := fs.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("one path opened twice")
	}
	a.Log(line(1))
	if err := fs.Release(a); err != nil {
		t.Fatal(err)
	}
	b.Log(line(2)) // still open for its other user
	if err := fs.Release(b); err != nil {
		t.Fatal(err)
	}
	if got := readLines(t, path); len(got) != 2 {
		t.Errorf("file holds %q, want both lines", got)
	}
	b.Log(line(3))
	if fs.Dropped() != 1 {
		t.Errorf("Dropped %d after a line to the closed writer, want 1", fs.Dropped())
	}
	if err := fs.Release(b); err == nil {
		t.Error("releasing a closed writer again reported no error")
	}
}

func TestReopenReopensEveryFile(t *testing.T) {
	fs := NewFiles(Config{})
	dir := t.TempDir()
	var ws []*Writer
	for _, name := range []string{"a.log", "b.log"} {
		w, err := fs.Acquire(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
		if err := os.Rename(w.Path(), w.Path()+".1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.Reopen(); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		w.Log(line(1))
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if got := readLines(t, w.Path()); len(got) != 1 {
			t.Errorf("%s holds %q after the reopen, want the line", w.Path(), got)
		}
	}
}

func TestAcquireFailsWhenTheFileCannotBeOpened(t *testing.T) {
	fs := NewFiles(Config{})
	if _, err := fs.Acquire(filepath.Join(t.TempDir(), "missing", "x.log")); err == nil {
		t.Fatal("Acquire in a missing directory did not fail")
	}
	if len(fs.writers()) != 0 {
		t.Error("a failed Acquire left a writer")
	}
}
