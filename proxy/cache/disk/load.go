package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Loaded is what Open found on disk.
type Loaded struct {
	// Clean is false when the last run did not shut down cleanly (its
	// last purges may not have reached the disk): the caller must treat
	// the loaded entries as a fan-out gap. True for an empty directory.
	Clean bool
	// Handover: the files were left by a running process handing over
	// to this one (Checkpoint); Clean too.
	Handover bool
	// Objects and Entries were loaded into the cache; Kept more objects
	// stayed on disk only (past Config.RAM).
	Objects, Entries, Kept int
	// Corrupt files (truncated, altered) and files whose every entry
	// expired were deleted.
	Corrupt, Expired int
	Took             time.Duration
}

// Loaded says what Open found.
func (t *Tier) Loaded() Loaded { return t.loaded }

// onDisk is a file found at load.
type onDisk struct {
	name  string
	mtime int64
}

// load prepares the directory and reads every file back.
func (t *Tier) load() error {
	began := time.Now()
	root := t.cfg.Path
	if err := os.RemoveAll(filepath.Join(root, tmpDir)); err != nil {
		return fmt.Errorf("disk: clear %s: %w", tmpDir, err)
	}
	for _, d := range []string{tmpDir, objectsDir} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			return fmt.Errorf("disk: %w", err)
		}
	}
	clean, err := take(root, cleanFile)
	if err != nil {
		return err
	}
	handover, err := take(root, handoverFile)
	if err != nil {
		return err
	}
	t.loaded.Handover = handover && !clean
	found, err := t.list()
	if err != nil {
		return err
	}
	t.loaded.Clean = clean || handover || len(found) == 0
	if err := t.loadGap(); err != nil {
		return err
	}
	t.readAll(found)
	t.applyPurges() // a gap whose grace ran out: its files go
	t.delete(t.evict(0))
	t.loaded.Took = time.Since(began)
	return nil
}

// take reports whether the last run left the marker name, and removes
// it durably: a crash from now on must read as unclean.
func take(root, name string) (bool, error) {
	err := os.Remove(filepath.Join(root, name))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("disk: %w", err)
	}
	return true, syncDir(root)
}

// list finds the files, newest first; it creates the 256 subdirectories.
func (t *Tier) list() ([]onDisk, error) {
	var found []onDisk
	for i := range 256 {
		dir := filepath.Join(t.cfg.Path, objectsDir, fmt.Sprintf("%02x", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("disk: %w", err)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("disk: %w", err)
		}
		for _, de := range ents {
			info, err := de.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			found = append(found, onDisk{name: de.Name(), mtime: info.ModTime().UnixNano()})
		}
	}
	slices.SortFunc(found, func(a, b onDisk) int { return int(min(max(b.mtime-a.mtime, -1), 1)) })
	return found, nil
}

// readAll reads the files on as many goroutines as there are CPUs; the
// newest go into the cache until Config.RAM is reached, the rest stay on
// disk. The index keeps them oldest first.
func (t *Tier) readAll(found []onDisk) {
	files := make([]*file, len(found))
	var (
		next, ram atomic.Int64
		mu        sync.Mutex // guards t.loaded's counts
		wg        sync.WaitGroup
	)
	for range 4 * runtime.GOMAXPROCS(0) { // more than the CPUs: a cold read waits on the device
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte // for the files that stay on disk only
			for i := next.Add(1) - 1; i < int64(len(found)); i = next.Add(1) - 1 {
				f, n, why := t.read(found[i].name, &ram, &buf)
				mu.Lock()
				t.count(n, why)
				mu.Unlock()
				files[i] = f
			}
		}()
	}
	wg.Wait()
	for i := len(files) - 1; i >= 0; i-- {
		if files[i] != nil {
			t.index(files[i])
		}
	}
}

// Why a file was not loaded.
const (
	readOK = iota
	readKept
	readCorrupt
	readExpired
)

func (t *Tier) count(entries, why int) {
	switch why {
	case readOK:
		t.loaded.Objects++
		t.loaded.Entries += entries
	case readKept:
		t.loaded.Kept++
	case readCorrupt:
		t.loaded.Corrupt++
	case readExpired:
		t.loaded.Expired++
	}
}

// read loads one file into the cache while ram allows; a file that is
// corrupt, is not its key's, or holds nothing servable is deleted. Once
// RAM is full the files are only checked and indexed: read into buf,
// which the next one reuses (nothing of them is kept but their key, tags
// and times), and revived when a fetch reads them again.
func (t *Tier) read(name string, ram *atomic.Int64, buf *[]byte) (*file, int, int) {
	path := t.pathOf(name)
	onlyDisk := t.cfg.RAM > 0 && ram.Load() > t.cfg.RAM
	var b []byte
	var err error
	var id ident
	if onlyDisk {
		b, err = readFileInto(path, *buf, &id)
		*buf = b
	} else {
		b, err = readFileInto(path, nil, &id)
	}
	var o *object
	if err == nil {
		o, err = decode(b)
	}
	if err == nil && nameOf(o.key) != name {
		err = fmt.Errorf("%w: key does not match the name", ErrCorrupt)
	}
	if err != nil {
		t.log.Warn("disk tier: dropped an unreadable entry file", "file", path, "err", err)
		_ = os.Remove(path) // best effort: unreadable now, unreadable at the next start
		return nil, 0, readCorrupt
	}
	if onlyDisk {
		t.keepUnexpired(o)
	} else {
		t.keepServable(o)
	}
	if len(o.variants) == 0 {
		_ = os.Remove(path) // best effort, as above
		return nil, 0, readExpired
	}
	f := newFile(name, o, int64(len(b)))
	if id.size == f.size {
		f.checked.Store(&id) // checked whole just now: Lend may send it
	}
	if onlyDisk {
		return f, 0, readKept
	}
	size := int64(0)
	for _, e := range o.variants {
		size += int64(e.Size())
	}
	if t.cfg.RAM > 0 && ram.Add(size) > t.cfg.RAM {
		return f, 0, readKept
	}
	h := t.c.Hash([]byte(o.key))
	for i := len(o.variants) - 1; i >= 0; i-- { // the newest last, first again
		t.c.Insert(h, o.key, o.vary, o.variants[i])
	}
	f.tie(o.variants, &id) // RAM's copies are the file's (ramfile.go)
	return f, len(o.variants), readOK
}

// readFile is os.ReadFile in four system calls (open, fstat, read,
// close): at start there is one file per URL, and os.File's poller
// set-up costs more than the read of a small file.
func readFile(path string) ([]byte, error) { return readFileInto(path, nil, nil) }

// readFileInto is readFile into buf when it has room; id, unless nil,
// is what fstat said of the file.
func readFileInto(path string, buf []byte, id *ident) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd) //nolint:errcheck // read-only: nothing to lose
	got, err := fstatID(fd)
	if err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if id != nil {
		*id = got
	}
	b := buf[:0]
	if int64(cap(b)) >= got.size {
		b = b[:got.size]
	} else {
		b = make([]byte, got.size)
	}
	n, err := readFull(fd, b, -1)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return b[:n], nil // shorter: shrank since fstat, the checksum decides
}

// keepUnexpired drops the variants that expired.
func (t *Tier) keepUnexpired(o *object) {
	now := t.c.Now()
	kept := o.variants[:0]
	for _, e := range o.variants {
		if !e.Expired(now) {
			kept = append(kept, e)
		}
	}
	o.variants = kept
}

// keepServable drops the variants that expired or that their owner
// cannot revive.
func (t *Tier) keepServable(o *object) {
	now := t.c.Now()
	kept := o.variants[:0]
	for i, e := range o.variants {
		switch {
		case e.Expired(now):
		case t.cfg.Revive != nil && !t.cfg.Revive(o.key, e, o.docs[i]):
		case t.cfg.Revive == nil && o.docs[i]: // an ESI page without its parse would show its markup
		default:
			kept = append(kept, e)
		}
	}
	o.variants = kept
}

// markClean flushes the filesystem and leaves the marker that says every
// purge reached the disk.
func (t *Tier) markClean() error {
	root := t.cfg.Path
	if err := syncFS(root); err != nil {
		return err
	}
	return t.mark(cleanFile)
}

// syncFS flushes the whole filesystem of dir: every copy and every
// deletion since start, before the marker vouches for them.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("disk: %w", err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("disk: syncfs %s: %w", dir, err)
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("disk: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("disk: sync %s: %w", dir, err)
	}
	return nil
}
