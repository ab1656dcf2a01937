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
	"slices"
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
	// Queue is how many keys' copies may wait for the writer (queue.go);
	// more are dropped and counted. 0 means 1024.
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
	// OpenFiles bounds the files kept open to be lent (held.go); 0: the
	// process's bound. Recheck is how long a kept file goes without an
	// fstat; 0 means 1s, negative: at every lend.
	OpenFiles int
	Recheck   time.Duration
}

// ErrBadConfig is returned for a config without a path or a size.
var ErrBadConfig = errors.New("disk: path and a positive size are required")

// Tier is the disk tier of one cache. Stored, Purged and Fetch are safe
// for concurrent use; only the writer goroutine changes the index.
type Tier struct {
	cfg Config
	c   *cache.Cache
	log *slog.Logger
	q   *queue
	// gate guards purge, files and order. A fetch holds it shared from
	// its look in the index to its copy's store in RAM, so a purge is
	// either queued before (and the fetch sees it) or after (and the
	// cache applies it to the copy in RAM, lower.go).
	gate  sync.RWMutex
	purge []numbered    // queued, not yet applied to the files
	seq   atomic.Uint64 // the last purge's number; changed under gate
	// The files by name, oldest written first.
	files map[string]*file
	order list.List
	ties  map[uintptr]*file // the files by the RAM entries they hold (ramfile.go)
	wake  chan struct{}     // a purge is waiting
	flush chan flush        // Checkpoint's requests to the writer
	// handed: the directory is an upgrade's successor's since
	// Checkpoint (checkpoint.go); no file is written any more.
	handed atomic.Bool
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	start  sync.Once
	// The writer's own state.
	buf      []byte
	degraded int64      // until when writes are skipped, unix nanos
	left     []string   // files unindexed but not deleted yet (retried)
	recent   []numbered // the last purges applied, oldest first (evicted)
	applied  uint64     // the last purge's number when they were applied
	batch    []put      // the copies being written
	made     []*file    // their files, to index
	stats    Stats
	loaded   Loaded
	gaps     gaps
	kept     heldFiles // the files kept open to be lent (held.go)
}

// file is what the tier knows of one file without reading it.
type file struct {
	name, key string
	tags      []string
	born      int64 // the oldest variant's fill start
	size      int64
	el        *list.Element
	// checked is the file a whole read last found sound (lend.go).
	checked atomic.Pointer[ident]
	held    atomic.Pointer[held] // kept open to be lent (held.go)
	from    *tied                // the RAM copies it holds (ramfile.go)
}

// put is one object to copy, stored after the purge numbered seq.
type put struct {
	h   uint64
	o   *cache.Object
	seq uint64
}

// flush asks the writer to write and apply what is queued, then close
// done; handOver: and to write no copy after (Checkpoint).
type flush struct {
	done     chan struct{}
	handOver bool
}

// numbered is a purge with its number (Seq).
type numbered struct {
	seq uint64
	p   cache.Purge
}

// Stats count what the tier did; read them with Snapshot.
type Stats struct {
	files, bytes                              atomic.Int64
	written, dropped, failed, evicted, purged atomic.Uint64
	hits, corrupt, queued                     atomic.Uint64
	// sent counts the lends of files to answers (Lend, FileOf), whether
	// an answer then sends from them or not; sendfiles the bodies the
	// socket's sendfile sent from them (cache.LendCounter).
	sent, sendfiles atomic.Uint64
	degraded        atomic.Bool
}

// Open loads the files under cfg.Path into c (Loaded says what it found)
// and makes the tier c's lower tier. Start begins writing.
func Open(cfg Config, c *cache.Cache) (*Tier, error) {
	if cfg.Path == "" || cfg.Size <= 0 {
		return nil, ErrBadConfig
	}
	cfg.Path = filepath.Clean(cfg.Path) // the files' paths are built from it (cpath)
	if cfg.Queue <= 0 {
		cfg.Queue = 1024
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 30 * time.Second
	}
	t := &Tier{cfg: cfg, c: c, log: cfg.Log, q: newQueue(cfg.Queue), wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), files: map[string]*file{}, ties: map[uintptr]*file{}, flush: make(chan flush)}
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
		t.stopGaps()
		t.endGaps() // a grace that ran out while the timer stopped is applied
		close(t.stop)
		<-t.done
		t.drain()
		t.unholdAll()
		if mark && len(t.left) > 0 {
			err = fmt.Errorf("disk: %d purged or evicted files could not be deleted", len(t.left))
		} else if mark {
			err = t.markClean()
		}
	})
	return err
}

// Stored queues a copy of o in place of the one of its key still
// waiting; when the queue is full it is dropped.
func (t *Tier) Stored(h uint64, o *cache.Object, seq uint64) {
	if t.handed.Load() {
		return
	}
	if !t.q.push(put{h, o, seq}) {
		t.stats.dropped.Add(1)
	}
}

// Backlogged reports whether more than half the queue waits for the
// writer (cache.Backlogger).
func (t *Tier) Backlogged() bool { return t.q.waiting() > t.cfg.Queue/2 }

// Seq is the number of the last purge queued.
func (t *Tier) Seq() uint64 { return t.seq.Load() }

// Purged queues p; purges are never dropped.
func (t *Tier) Purged(p cache.Purge) {
	t.gate.Lock()
	t.purge = append(t.purge, numbered{t.seq.Add(1), p})
	t.gate.Unlock()
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
		case <-t.q.ready:
			t.writeNext()
		case <-t.wake:
		case f := <-t.flush:
			t.drain()
			if f.handOver {
				t.handed.Store(true) // by the writer: no copy is written after the drain
			}
			close(f.done)
		case <-t.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// drain writes what is left once the writer stopped.
func (t *Tier) drain() {
	for t.writeNext() {
	}
	t.applyPurges()
}

// writeNext writes the oldest copies waiting, up to writeBatch, if there
// are any, and reports whether there were. The batch's files are indexed
// together: the gate, which every read from disk holds shared, is taken
// once for them, not once each (under load each wait for it costs the
// writer a trip through the scheduler).
func (t *Tier) writeNext() bool {
	t.batch = t.q.pop(t.batch[:0], writeBatch)
	if len(t.batch) == 0 {
		return false
	}
	t.applyPurges() // a purge queued before the copies were taken goes first
	t.makeRoom(t.batch)
	made := t.made[:0]
	room := t.cfg.Size - t.stats.bytes.Load()
	for _, p := range t.batch {
		f := t.write(p)
		if f == nil {
			continue
		}
		made = append(made, f)
		if room -= f.size; room < 0 { // a file past the bound: the oldest go now, not a batch later
			t.indexAll(made)
			made = made[:0]
			room = t.cfg.Size - t.stats.bytes.Load()
		}
	}
	t.indexAll(made)
	for i, p := range t.batch {
		t.q.done(p) // after the index has its file, if it was written
		t.batch[i] = put{}
	}
	clear(made)
	t.made = made
	return true
}

// makeRoom deletes the oldest files ahead of a batch that would take the
// tier past its size: its files are on disk before the index counts them
// (indexAll), so evicting only then would leave the directory up to a
// batch over its bound (32 copies of up to max_object_size); writeNext
// indexes early what still does not fit, so the directory holds at most
// one file past it, and the gate is taken once a batch when there is
// room. A copy is counted as RAM counts it, a little more than its file;
// one that replaces a file, as what it adds.
func (t *Tier) makeRoom(batch []put) {
	var need int64
	for _, p := range batch {
		for _, e := range p.o.Variants {
			need += int64(e.Size())
		}
		if old := t.files[nameOf(p.o.Key)]; old != nil { // the writer alone changes the index
			need -= old.size
		}
	}
	if t.stats.bytes.Load()+need <= t.cfg.Size {
		return
	}
	t.gate.Lock()
	gone := t.evict(need)
	t.gate.Unlock()
	t.delete(gone)
}

// writeBatch bounds the copies written between two looks at the purges.
const writeBatch = 32

// applyPurges takes the queued purges out of the index and the queue in
// one step, then deletes their files.
func (t *Tier) applyPurges() {
	if t.seq.Load() == t.applied && len(t.left) == 0 {
		return // none queued: the gate is not taken for nothing
	}
	t.gate.Lock()
	t.applied = t.seq.Load() // every purge numbered so far is on the list
	var gone []*file
	for _, n := range t.purge {
		gone = t.apply(gone, n.p)
	}
	t.remember(t.purge)
	t.purge = nil
	t.gate.Unlock()
	t.stats.purged.Add(uint64(len(gone)))
	t.delete(gone)
}

// apply unindexes the files p covers and appends them to gone.
func (t *Tier) apply(gone []*file, p cache.Purge) []*file {
	if p.Exact != "" {
		if f := t.files[nameOf(p.Exact)]; f != nil && f.key == p.Exact {
			t.unindex(f)
			gone = append(gone, f)
		}
		return gone
	}
	for _, f := range t.files {
		if covers(p, f.key, f.tags, f.born) {
			t.unindex(f)
			gone = append(gone, f)
		}
	}
	return gone
}

// covers reports whether p reaches a copy of key with tags whose fill
// began at born.
func covers(p cache.Purge, key string, tags []string, born int64) bool {
	if p.Exact != "" {
		return p.Exact == key
	}
	return born <= p.At && (p.Key != nil && p.Key(key) || p.Tag != nil && slices.ContainsFunc(tags, p.Tag))
}

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
	t.gate.Lock()
	f := t.files[nameOf(key)]
	if f != nil && f.key == key {
		t.unindex(f)
	}
	t.gate.Unlock()
	if f != nil && f.key == key {
		t.delete([]*file{f})
	}
}

// write copies p's object, if it is still what the cache stores, with the
// variants no purge reached, and returns its file, to index; an object
// left with none is deleted.
func (t *Tier) write(p put) *file {
	if t.handed.Load() {
		return nil // queued before Checkpoint's drain ended
	}
	now := t.c.Now()
	if !t.c.Holds(p.h, p.o) {
		// Replaced (its successor has its own copy), purged (the purge
		// removed the file) or evicted. One whose every variant is past
		// serving went because it expired: it superseded the copy on
		// disk, which must not come back at the next start. One evicted
		// for room is copied still: the disk holds more than RAM.
		if !t.anyServable(p.o, now) {
			t.forget(p.o.Key)
			return nil
		}
		if !t.evicted(p) {
			return nil
		}
	}
	if now < t.degraded {
		t.stats.dropped.Add(1)
		return nil
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
		return nil
	}
	name := nameOf(o.key)
	t.buf = encode(t.buf[:0], o)
	var id ident
	if err := t.writeFile(name, t.buf, &id); err != nil {
		t.fail(err, now)
		return nil
	}
	t.stats.degraded.Store(false)
	t.stats.written.Add(1)
	f := newFile(name, o, int64(len(t.buf)))
	f.tie(o.variants, &id) // RAM's copies may be sent from it (ramfile.go)
	return f
}

// indexAll indexes the files written, then deletes the oldest while the
// tier is over its size.
func (t *Tier) indexAll(made []*file) {
	if len(made) == 0 {
		return
	}
	t.gate.Lock()
	for _, f := range made {
		t.index(f)
	}
	gone := t.evict(0)
	t.gate.Unlock()
	t.delete(gone)
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
// so a reader never sees half of it; id says which file it wrote (zero
// when it cannot tell: ramfile.go).
func (t *Tier) writeFile(name string, b []byte, id *ident) error {
	tmp, err := os.CreateTemp(filepath.Join(t.cfg.Path, tmpDir), name+".*")
	if err != nil {
		return fmt.Errorf("disk: create: %w", err)
	}
	_, err = tmp.Write(b)
	pre := fstatIdent(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), t.pathOf(name))
	}
	if err == nil {
		*id = renamedIdent(t.pathOf(name), pre)
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
	t.link(f)
	t.stats.files.Add(1)
	t.stats.bytes.Add(f.size)
}

func (t *Tier) unindex(f *file) {
	t.unhold(f, nil) // its descriptor never serves again
	t.order.Remove(f.el)
	delete(t.files, f.name)
	t.unlink(f)
	t.stats.files.Add(-1)
	t.stats.bytes.Add(-f.size)
}

// delete deletes the files of gone, unindexed already (nothing fetches
// them any more), and retries those an earlier call could not delete: a
// file left would come back at the next start, so Close leaves no
// clean-shutdown marker while one is.
func (t *Tier) delete(gone []*file) {
	left := t.left[:0]
	for _, path := range t.left {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			left = append(left, path)
		}
	}
	t.left = left
	for _, f := range gone {
		path := t.pathOf(f.name)
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.log.Warn("disk tier: cannot delete a purged or evicted entry file; retrying", "err", err)
			t.left = append(t.left, path)
		}
	}
}

// evict unindexes the oldest written files while over the size bound
// less room and returns them, to delete.
func (t *Tier) evict(room int64) []*file {
	var gone []*file
	for t.stats.bytes.Load() > t.cfg.Size-room && t.order.Len() > 0 {
		f := t.order.Front().Value.(*file)
		t.unindex(f)
		gone = append(gone, f)
		t.stats.evicted.Add(1)
	}
	return gone
}

func newFile(name string, o *object, size int64) *file {
	f := &file{name: name, key: o.key, size: size, born: int64(^uint64(0) >> 1)}
	seen := map[string]bool{}
	for _, e := range o.variants {
		f.born = min(f.born, bornOf(e))
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
	// handoverFile vouches for the files to an upgrade's successor: every
	// purge before it reached them (Checkpoint); those after it reach
	// the successor another way.
	handoverFile = "handover"
)

// nameOf is the file name of a key: a hash, so any key makes a safe name;
// the file holds the key itself, compared at load.
func nameOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

func (t *Tier) pathOf(name string) string {
	var path [pathRoom]byte
	p := cpath(&path, t.cfg.Path, name)
	return string(p[:len(p)-1])
}

// pathRoom is the room on the stack for a file's path (cpath).
const pathRoom = 512

// cpath is the path of the file name under root, NUL-terminated for a
// system call: in buf, unless root is too long for it.
func cpath[N string | []byte](buf *[pathRoom]byte, root string, name N) []byte {
	p := append(buf[:0], root...)
	p = append(p, "/"+objectsDir+"/"...)
	p = append(p, name[:2]...)
	p = append(p, '/')
	p = append(p, name...)
	return append(p, 0)
}

var _ cache.Lower = (*Tier)(nil)
