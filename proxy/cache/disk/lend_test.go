package disk

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

func lend(n node, key string) *cache.Object { return n.c.Lend([]byte(key)) }

// bodyOf reads s of a lent entry's file.
func bodyOf(t *testing.T, f *cache.BodyFile, s cache.Span) []byte {
	t.Helper()
	b := make([]byte, s.Len)
	if _, err := f.File.ReadAt(b, s.Off); err != nil && err != io.EOF {
		t.Fatalf("read %+v: %v", s, err)
	}
	return b
}

// checked opens the tier in dir with the keys on disk only, checked
// whole by the load.
func checked(t *testing.T, dir string, writing bool) node {
	t.Helper()
	return open(t, dir, 64<<20, Config{RAM: 1}, writing)
}

// A file is lent once a whole read checked it in this process: the load,
// or the first fetch of one written since.
func TestOnlyAFileCheckedWholeIsLent(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	store(a, "http://s/1", cache.VarySpec{}, entry("", "body"))
	written(t, a, 1)
	if o := lend(a, "http://s/1"); o != nil {
		t.Fatal("a file written and never read whole was lent")
	}
	if fetch(a, "http://s/1", "") == nil {
		t.Fatal("not fetched")
	}
	// The fetch found it in RAM: the file is still unchecked.
	if o := lend(a, "http://s/1"); o != nil {
		t.Fatal("a file never read whole was lent")
	}
	a.stop(t)
	b := checked(t, dir, true)
	o := lend(b, "http://s/1")
	if o == nil {
		t.Fatal("a file the load checked was not lent")
	}
	o.Variants[0].File.Close()
}

func TestLentCopyIsTheCheckedFileWithItsBodiesInIt(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	long := strings.Repeat("h", 6000) // a head larger than one read
	gz, br := entry("gzip\x00fr\x00", strings.Repeat("bonjour ", 2000), "s\x00p"), entry("br\x00en\x00", "hello", "s\x00p")
	gz.Header = append(gz.Header, cache.Field{Name: []byte("X-Long"), Value: []byte(long)})
	br.Brotli = []byte(strings.Repeat("b", 9000))
	store(a, "http://s/p", aeVary, gz)
	store(a, "http://s/p", aeVary, br)
	a.stop(t)

	b := checked(t, dir, true)
	o := lend(b, "http://s/p")
	if o == nil {
		t.Fatal("a checked file was not lent")
	}
	defer o.Variants[0].File.Close()
	if !reflect.DeepEqual(o.Vary, aeVary) {
		t.Errorf("vary %+v, want %+v", o.Vary, aeVary)
	}
	for _, want := range []*cache.Entry{gz, br} {
		got := o.Variant([]byte(want.Variant))
		if got == nil || got.File == nil {
			t.Fatalf("variant %q not lent with its file", want.Variant)
		}
		f := got.File
		bodies := [][]byte{bodyOf(t, f, f.Body), bodyOf(t, f, f.Gzip), bodyOf(t, f, f.Brotli)}
		for i, w := range [][]byte{want.Body, want.Gzip, want.Brotli} {
			if string(bodies[i]) != string(w) {
				t.Errorf("%q body %d: %d bytes from the file, want %d", want.Variant, i, len(bodies[i]), len(w))
			}
		}
		if g, w := headOf(got), headOf(want); !reflect.DeepEqual(g, w) {
			t.Errorf("%q head:\n got %+v\nwant %+v", want.Variant, g, w)
		}
		if (got.Gzip != nil) != (want.Gzip != nil) || (got.Brotli != nil) != (want.Brotli != nil) {
			t.Errorf("%q: which compressed copies it has is lost", want.Variant)
		}
	}
}

// headOf is what a file holds of e but its bodies.
func headOf(e *cache.Entry) []any {
	return []any{e.Variant, e.Status, e.Header, e.Internal, e.ETag, e.ETagWeak, e.LastModified, e.Date,
		e.ContentType, e.Tags, e.Born, e.Stored, e.InitialAge, e.FreshUntil, e.StaleUntil, e.ErrorUntil,
		e.KeepUntil, e.MustRevalidate, e.Shared}
}

func TestFileChangedSinceItWasCheckedIsNotLent(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"rewritten in place", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			b[len(b)/2] ^= 1
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(b[len(b)/2:len(b)/2+1], int64(len(b)/2)); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}},
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, 20); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			if err := os.WriteFile(path+".new", b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"deleted", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			onDiskOnly(t, dir, "http://s/1")
			b := open(t, dir, 64<<20, Config{RAM: 1, Recheck: -1}, true) // an fstat at every lend
			if o := lend(b, "http://s/1"); o == nil {
				t.Fatal("the checked file was not lent")
			} else {
				o.Variants[0].File.Close()
			}
			tt.change(t, filepath.Join(dir, objectsDir, nameOf("http://s/1")[:2], nameOf("http://s/1")))
			if o := lend(b, "http://s/1"); o != nil {
				o.Variants[0].File.Close()
				t.Fatal("a file changed since it was checked was lent")
			}
		})
	}
}

// A purge the writer has not applied to the files yet covers what is lent
// as it covers what is fetched.
func TestQueuedPurgeCoversWhatIsLent(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1", "http://s/2")
	b := checked(t, dir, false)
	b.c.PurgeTag("s\x00http://s/1", false, 0)
	if o := lend(b, "http://s/1"); o != nil {
		if e := o.Variants[0]; b.c.Status(e, b.c.Now()) != cache.Purged {
			t.Fatal("lent after its purge (queued, not applied)")
		}
		o.Variants[0].File.Close()
	}
	o := lend(b, "http://s/2")
	if o == nil {
		t.Fatal("a page the purge does not cover was not lent")
	}
	o.Variants[0].File.Close()
}
