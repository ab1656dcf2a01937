package disk

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// Config places and bounds the tier.
type Config struct {
	// Path is the tier's directory; it must exist. Required.
	Path string
	// Size bounds the bytes of the files kept; the oldest written go
	// first. Required.
	Size int64
	// RAM bounds the bytes of entries loaded into the cache at start (its
	// size): the newest files first. 0: no bound.
	RAM int64
	// Queue is how many copies may wait for the writer; more are dropped
	// and counted. 0 means 1024.
	Queue int
	// Retry is how long the tier stays RAM-only after a write failed
	// (disk full); 0 means 30s.
	Retry time.Duration
	// Revive rebuilds at load what an entry's owner keeps beside it (its
	// ESI parse when doc, a ready head), given its key; false drops the
	// entry. nil drops the entries that had an ESI parse and keeps the
	// others as they are.
	Revive func(key string, e *cache.Entry, doc bool) bool
	// Log receives the tier's warnings; nil: slog.Default().
	Log *slog.Logger
}

// ErrBadConfig is returned for a config without a path or a size.
var ErrBadConfig = errors.New("disk: path and a positive size are required")

// Tier is the disk tier of one cache. Stored and Purged are safe for
// concurrent use; the writer goroutine owns the index.
type Tier struct {
	cfg   Config
	c     *cache.Cache
	log   *slog.Logger
	puts  chan put
	mu    sync.Mutex // guards purges
	purge []cache.Purge
	wake  chan struct{} // a purge is waiting
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	start sync.Once
	// The writer's own state: the files by name, oldest written first.
	files    map[string]*file
	order    list.List
	buf      []byte
	degraded int64 // until when writes are skipped, unix nanos
	stats    Stats
	loaded   Loaded
}

// file is what the tier knows of one file without reading it.
type file struct {
	name, key string
	tags      []string
	born      int64 // the oldest variant's fill start
	size      int64
	el        *list.Element
}

// put is one object to copy.
type put struct {
	h uint64
	o *cache.Object
}

// Stats count what the tier did; read them with Snapshot.
type Stats struct {
	files, bytes                              atomic.Int64
	written, dropped, failed, evicted, purged atomic.Uint64
	degraded                                  atomic.Bool
}

// Open loads the files under cfg.Path into c (Loaded says what it found)
// and makes the tier c's lower tier. Start begins writing.
func Open(cfg Config, c *cache.Cache) (*Tier, error) {
	if cfg.Path == "" || cfg.Size <= 0 {
		return nil, ErrBadConfig
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 1024
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 30 * time.Second
	}
	t := &Tier{cfg: cfg, c: c, log: cfg.Log, puts: make(chan put, cfg.Queue), wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), files: map[string]*file{}}
	if t.log == nil {
		t.log = slog.Default()
	}
	if err := t.load(); err != nil {
		return nil, err
	}
	c.SetLower(t)
	return t, nil
}

// Start begins the writer; it stops with Close (or ctx).
func (t *Tier) Start(ctx context.Context) {
	t.start.Do(func() { go t.run(ctx) })
}

// Close writes what is queued, applies every purge, flushes the
// filesystem and leaves the clean-shutdown marker. It is idempotent.
func (t *Tier) Close() error { return t.close(true) }

// Leave is Close for a process that handed the directory on to another
// (an upgrade's successor, which loaded it already): every purge is
// applied, but no marker is left — only the last process out may vouch
// for the files, and a crash of the successor must read as one.
func (t *Tier) Leave() error { return t.close(false) }

func (t *Tier) close(mark bool) error {
	var err error
	t.once.Do(func() {
		t.start.Do(func() { close(t.done) }) // never started: nothing runs
		close(t.stop)
		<-t.done
		t.drain()
		if mark {
			err = t.markClean()
		}
	})
	return err
}

// Stored queues a copy of o; when the queue is full it is dropped.
func (t *Tier) Stored(h uint64, o *cache.Object) {
	select {
	case t.puts <- put{h, o}:
	default:
		t.stats.dropped.Add(1)
	}
}

// Purged queues p; purges are never dropped.
func (t *Tier) Purged(p cache.Purge) {
	t.mu.Lock()
	t.purge = append(t.purge, p)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// run is the writer: purges first, then copies, until stopped.
func (t *Tier) run(ctx context.Context) {
	defer close(t.done)
	for {
		t.applyPurges()
		select {
		case p := <-t.puts:
			t.applyPurges() // a purge queued before the copy was taken goes first
			t.write(p)
		case <-t.wake:
		case <-t.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// drain writes what is left once the writer stopped.
func (t *Tier) drain() {
	for {
		t.applyPurges()
		select {
		case p := <-t.puts:
			t.write(p)
		default:
			t.applyPurges()
			return
		}
	}
}

func (t *Tier) applyPurges() {
	t.mu.Lock()
	ps := t.purge
	t.purge = nil
	t.mu.Unlock()
	for _, p := range ps {
		t.apply(p)
	}
}

// apply deletes the files p covers.
func (t *Tier) apply(p cache.Purge) {
	if p.Exact != "" {
		if f := t.files[nameOf(p.Exact)]; f != nil && f.key == p.Exact {
			t.remove(f)
			t.stats.purged.Add(1)
		}
		return
	}
	for _, f := range t.files {
		if f.born <= p.At && (p.Key != nil && p.Key(f.key) || p.Tag != nil && anyTag(f.tags, p.Tag)) {
			t.remove(f)
			t.stats.purged.Add(1)
		}
	}
}

func anyTag(tags []string, match func(string) bool) bool {
	for _, tag := range tags {
		if match(tag) {
			return true
		}
	}
	return false
}

// write copies p's object, if it is still what the cache stores, with the
// variants no purge reached; an object left with none is deleted.
// anyServable reports whether a variant of o may still be served at now.
func (t *Tier) anyServable(o *cache.Object, now int64) bool {
	for _, e := range o.Variants {
		if !e.Expired(now) && !t.c.Invalidated(e) {
			return true
		}
	}
	return false
}

// forget removes the file of key, if there is one.
func (t *Tier) forget(key string) {
	if f := t.files[nameOf(key)]; f != nil && f.key == key {
		t.remove(f)
	}
}

func (t *Tier) write(p put) {
	now := t.c.Now()
	if !t.c.Holds(p.h, p.o) {
		// Replaced (its successor has its own copy), purged (the purge
		// removed the file) or evicted. One whose every variant is past
		// serving went because it expired: it superseded the copy on
		// disk, which must not come back at the next start.
		if !t.anyServable(p.o, now) {
			t.forget(p.o.Key)
		}
		return
	}
	if now < t.degraded {
		t.stats.dropped.Add(1)
		return
	}
	o := &object{key: p.o.Key, vary: p.o.Vary}
	for _, e := range p.o.Variants {
		if e.Expired(now) || t.c.Invalidated(e) {
			continue
		}
		o.variants = append(o.variants, e)
		o.docs = append(o.docs, e.Doc != nil)
	}
	if len(o.variants) == 0 {
		t.forget(o.key)
		return
	}
	name := nameOf(o.key)
	t.buf = encode(t.buf[:0], o)
	if err := t.writeFile(name, t.buf); err != nil {
		t.fail(err, now)
		return
	}
	t.stats.degraded.Store(false)
	t.stats.written.Add(1)
	t.index(newFile(name, o, int64(len(t.buf))))
	t.evict()
}

// fail puts the tier in RAM-only mode for cfg.Retry.
func (t *Tier) fail(err error, now int64) {
	t.stats.failed.Add(1)
	t.degraded = now + int64(t.cfg.Retry)
	if !t.stats.degraded.Swap(true) {
		t.log.Warn("disk tier: write failed; serving from RAM only, retrying later", "path", t.cfg.Path, "retry", t.cfg.Retry, "err", err)
	}
}

// writeFile writes b under name through a temporary file and a rename,
// so a reader never sees half of it.
func (t *Tier) writeFile(name string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Join(t.cfg.Path, tmpDir), name+".*")
	if err != nil {
		return fmt.Errorf("disk: create: %w", err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), t.pathOf(name))
	}
	if err != nil {
		_ = os.Remove(tmp.Name()) // best effort: load clears the directory anyway
		return fmt.Errorf("disk: write %s: %w", name, err)
	}
	return nil
}

// index records f, replacing the file of the same name.
func (t *Tier) index(f *file) {
	if old := t.files[f.name]; old != nil {
		t.unindex(old)
	}
	f.el = t.order.PushBack(f)
	t.files[f.name] = f
	t.stats.files.Add(1)
	t.stats.bytes.Add(f.size)
}

func (t *Tier) unindex(f *file) {
	t.order.Remove(f.el)
	delete(t.files, f.name)
	t.stats.files.Add(-1)
	t.stats.bytes.Add(-f.size)
}

// remove deletes f's file. A file that cannot be deleted stays indexed,
// so a later purge tries again.
func (t *Tier) remove(f *file) {
	if err := os.Remove(t.pathOf(f.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.log.Warn("disk tier: cannot delete a purged entry file", "err", err)
		return
	}
	t.unindex(f)
}

// evict deletes the oldest written files while over the size bound.
func (t *Tier) evict() {
	for t.stats.bytes.Load() > t.cfg.Size && t.order.Len() > 0 {
		t.remove(t.order.Front().Value.(*file))
		t.stats.evicted.Add(1)
	}
}

func newFile(name string, o *object, size int64) *file {
	f := &file{name: name, key: o.key, size: size, born: int64(^uint64(0) >> 1)}
	seen := map[string]bool{}
	for _, e := range o.variants {
		born := e.Born
		if born == 0 {
			born = e.Stored
		}
		f.born = min(f.born, born)
		for _, tag := range e.Tags {
			if !seen[tag] {
				seen[tag] = true
				f.tags = append(f.tags, tag)
			}
		}
	}
	return f
}

const (
	objectsDir = "objects"
	tmpDir     = "tmp"
	cleanFile  = "clean"
)

// nameOf is the file name of a key: a hash, so any key makes a safe name;
// the file holds the key itself, compared at load.
func nameOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

func (t *Tier) pathOf(name string) string {
	return filepath.Join(t.cfg.Path, objectsDir, name[:2], name)
}

var _ cache.Lower = (*Tier)(nil)
