package htaccess

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config says where a Tree reads.
type Config struct {
	// Root is the document root; its .htaccess is the first read.
	Root string
	// ProxyOnly reads only the LiteSpeed cache rules (proxy mode: the
	// origin's own server applies the rest).
	ProxyOnly bool
	// Name is the per-directory file's name; "" means ".htaccess".
	Name string
	// StatInterval is how long a directory's file (and any path a rule
	// tests) is trusted before it is stat'ed again; 0 means 1 s.
	StatInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives each file's errors and warnings, once per version of
	// the file; nil discards them.
	Log *slog.Logger
	// Open opens a directory's file by its path relative to Root
	// ("a/.htaccess"), confined to Root (the docroot opens it beneath
	// its directory, so a swapped symlink cannot lead outside); nil
	// opens Root joined with it.
	Open func(rel string) (*os.File, error)
	// Memo is the table of remembered evaluations, shared by the trees
	// of a process (NewMemo); nil gives the tree one of its own.
	Memo *Memo
}

// Tree reads the per-directory files under a root as requests need
// them: each directory's file is stat'ed at most once per StatInterval
// and parsed once per version (size, modification time, inode), so an
// edit is in force within a second, without a reload.
type Tree struct {
	cfg  Config
	root string // absolute, symlinks resolved, no trailing slash

	mu   sync.RWMutex // guards dirs
	dirs map[string]*dirState

	stats     statCache
	passwords passwordFiles
	memo      treeMemo
	// born is when the tree was made, by cfg.Now; ownClock: cfg.Now is
	// time.Now (the memo then reads the monotonic clock only).
	born     time.Time
	ownClock bool
}

// dirState is what is known of one directory's file.
type dirState struct {
	checked time.Time
	ver     fileVersion
	file    *File // nil: the directory has none (or it cannot be read)
	// eff is the rewrite configuration merged from the root down to
	// this directory, valid while the files it came from are those of
	// effFrom.
	effFrom []*File
	eff     *rewriteEff
}

type fileVersion struct {
	size  int64
	mtime int64
	ino   uint64
}

// NewTree checks that the root exists.
func NewTree(cfg Config) (*Tree, error) {
	if cfg.Name == "" {
		cfg.Name = ".htaccess"
	}
	if cfg.StatInterval <= 0 {
		cfg.StatInterval = time.Second
	}
	ownClock := cfg.Now == nil
	if ownClock {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("htaccess: %s: %w", cfg.Root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("htaccess: %w", err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("htaccess: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("htaccess: %s is not a directory", cfg.Root)
	}
	t := &Tree{cfg: cfg, root: strings.TrimSuffix(real, "/"), dirs: map[string]*dirState{}, born: cfg.Now(), ownClock: ownClock}
	if t.cfg.Open == nil {
		t.cfg.Open = func(rel string) (*os.File, error) {
			return os.OpenFile(t.root+"/"+rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		}
	}
	if t.cfg.Memo == nil {
		t.cfg.Memo = NewMemo()
	}
	t.memo.Memo, t.memo.id = t.cfg.Memo, treeIDs.Add(1)
	t.stats.interval = cfg.StatInterval
	t.passwords.interval = cfg.StatInterval
	return t, nil
}

// Root is the document root the tree reads, symlinks resolved.
func (t *Tree) Root() string { return t.root }

// maxDirs bounds the directories remembered; past it the map is dropped
// whole (a crawl of many directories re-reads them, nothing grows).
const maxDirs = 8192

// dir returns the current file of the directory named by its URL path
// ("/", "/a/"), re-reading it when its interval has passed.
func (t *Tree) dir(urlDir []byte, now time.Time) *dirState {
	t.mu.RLock()
	d := t.dirs[string(urlDir)]
	t.mu.RUnlock()
	if d != nil && now.Sub(d.checked) < t.cfg.StatInterval {
		return d
	}
	return t.refresh(string(urlDir), d, now)
}

// refresh opens the directory's file and parses it if it changed. The
// file is stat'ed and read through one descriptor: what is parsed is
// what was checked.
func (t *Tree) refresh(urlDir string, old *dirState, now time.Time) *dirState {
	name := t.root + urlDir + t.cfg.Name
	d := &dirState{checked: now}
	f, err := t.cfg.Open(urlDir[1:] + t.cfg.Name)
	var st fs.FileInfo
	if err == nil {
		defer f.Close()
		st, err = f.Stat()
	}
	switch {
	case err == nil && st.Mode().IsRegular():
		d.ver = versionOf(st)
		if old != nil && old.file != nil && old.ver == d.ver {
			d.file, d.effFrom, d.eff = old.file, old.effFrom, old.eff
			break
		}
		d.file = t.load(name, f, st)
		d.file.urlDir = urlDir
		t.memo.changed(d.file)
	case err == nil, errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		// No file: nothing configured here.
		if old != nil && old.file != nil {
			t.memo.changed(nil) // it was removed
		}
	default:
		// Apache answers 403 when it cannot read a directory's
		// .htaccess: so does ramjet (as an error of the directory),
		// also for one that leads outside the root.
		d.file = &File{Path: name, Errs: []error{&Error{File: name, Msg: "cannot read: " + err.Error()}}}
		d.file.failRead, d.file.urlDir = true, urlDir
		if old == nil || old.file == nil || !old.file.failRead {
			t.memo.changed(d.file)
		}
	}
	t.mu.Lock()
	if len(t.dirs) >= maxDirs {
		t.dirs = map[string]*dirState{}
	}
	t.dirs[urlDir] = d
	t.mu.Unlock()
	return d
}

// maxFileSize bounds what is read of one file: Apache's config reader
// would take longer ones, but nobody writes them.
const maxFileSize = 1 << 20

func (t *Tree) load(name string, r io.Reader, st fs.FileInfo) *File {
	if st.Size() > maxFileSize {
		return &File{Path: name, Errs: []error{&Error{File: name, Line: 1, Msg: "file larger than 1 MiB"}}}
	}
	src, err := io.ReadAll(io.LimitReader(r, maxFileSize))
	if err != nil {
		f := &File{Path: name, Errs: []error{&Error{File: name, Msg: "cannot read: " + err.Error()}}}
		f.failRead = true
		return f
	}
	f := Parse(name, src, t.cfg.ProxyOnly)
	for _, e := range f.Errs {
		t.cfg.Log.Error("htaccess: "+e.Error()+" (requests under its directory get 500)", "file", name)
	}
	for _, w := range f.Warnings {
		t.cfg.Log.Warn("htaccess: " + w)
	}
	for _, u := range f.Unknown {
		t.cfg.Log.Warn("htaccess: " + u + " (fails closed: the rule is not applied and requests it matches bypass the cache)")
	}
	return f
}

func versionOf(st fs.FileInfo) fileVersion {
	v := fileVersion{size: st.Size(), mtime: st.ModTime().UnixNano()}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		v.ino = s.Ino
	}
	return v
}

// statCache remembers what paths are, for the directory walk and the
// rules' file tests, for one interval each.
type statCache struct {
	interval time.Duration
	mu       sync.RWMutex // guards m
	m        map[string]statEntry
}

type statKind uint8

const (
	statNone statKind = iota
	statFile
	statDir
	statOther
)

type statEntry struct {
	at   time.Time
	kind statKind
	size int64
	link bool
	exec bool
}

// get stats path (absolute), through the cache. It allocates only when
// it stats.
func (c *statCache) get(path []byte, now time.Time) statEntry {
	c.mu.RLock()
	e, ok := c.m[string(path)]
	c.mu.RUnlock()
	if ok && now.Sub(e.at) < c.interval {
		return e
	}
	p := string(path)
	e = statEntry{at: now}
	if st, err := os.Stat(p); err == nil {
		e.size = st.Size()
		e.exec = st.Mode().Perm()&0o111 != 0
		switch {
		case st.Mode().IsRegular():
			e.kind = statFile
		case st.IsDir():
			e.kind = statDir
		default:
			e.kind = statOther
		}
	}
	if lst, err := os.Lstat(p); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		e.link = true
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxDirs {
		c.m = make(map[string]statEntry, 64)
	}
	c.m[p] = e
	c.mu.Unlock()
	return e
}
