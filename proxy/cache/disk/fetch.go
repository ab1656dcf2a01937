package disk

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// Fetch gives back the copy of key on disk when RAM has none (it
// implements cache.Fetcher): the copy waiting for the writer, if one
// does, as it is (queue.go: RAM evicted it already); else a file whose
// length, checksum and key hold, without the variants that expired,
// that their owner cannot revive, or that a purge not yet applied to the
// files covers, stored in RAM. A damaged file is deleted and never
// served.
func (t *Tier) Fetch(h uint64, key []byte) *cache.Object {
	var name [nameLen]byte
	nameInto(&name, key)
	o, err := t.fetch(h, name[:], key)
	if err == nil {
		return o
	}
	// Gone (another process sharing the directory, an upgrade's
	// predecessor, deleted it) or damaged: either way out of the index.
	if !errors.Is(err, os.ErrNotExist) {
		t.log.Warn("disk tier: dropped an unreadable entry file", "file", t.pathOf(string(name[:])), "err", err)
		t.stats.corrupt.Add(1)
	}
	t.Purged(cache.Purge{Exact: string(key), At: math.MaxInt64})
	return nil
}

func (t *Tier) fetch(h uint64, name, key []byte) (*cache.Object, error) {
	t.gate.RLock()
	defer t.gate.RUnlock()
	if o, waiting := t.queued(key); waiting {
		return o, nil
	}
	f := t.files[string(name)]
	if f == nil || f.key != string(key) {
		return nil, nil
	}
	var id ident
	b, err := t.readIndexed(name, f.size, &id)
	if err != nil {
		return nil, err
	}
	var o object
	// b is the entries' alone from here: their strings may alias it.
	if err := decodeInto(&o, b, true); err != nil {
		return nil, err
	}
	if o.key != f.key {
		return nil, fmt.Errorf("%w: key does not match the name", ErrCorrupt)
	}
	o.key = f.key // RAM keeps the index's copy, not one that holds b
	if id.size == f.size && id.size == int64(len(b)) {
		if c := f.checked.Load(); c == nil || *c != id {
			sound := id
			f.checked.Store(&sound) // Lend may send it from now on
		}
	}
	t.keepServable(&o)
	var stored *cache.Object
	for i := len(o.variants) - 1; i >= 0; i-- { // the newest last, first again
		e := o.variants[i]
		if t.pending(o.key, e) {
			continue
		}
		if n := t.c.Promote(h, o.key, o.vary, e); n != nil {
			stored = n
		}
	}
	if stored != nil {
		t.stats.hits.Add(1)
	}
	return stored, nil
}

// pending reports whether a purge queued but not yet applied to the files
// covers e, of key. The caller holds the gate.
func (t *Tier) pending(key string, e *cache.Entry) bool {
	born := bornOf(e)
	for _, n := range t.purge {
		if covers(n.p, key, e.Tags, born) {
			return true
		}
	}
	return false
}

var _ cache.Fetcher = (*Tier)(nil)
