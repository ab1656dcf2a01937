package disk

import "github.com/ramjet-proxy/ramjet/proxy/cache"

// Telling an object RAM evicted for room (copied still: the disk holds
// more than RAM) from one a purge took out of RAM (not copied: the purge
// deleted its file already, or found none to delete) takes the purges
// applied since the object was stored: the writer keeps the last ones,
// numbered, and an object older than all of them is not copied.

// keepApplied bounds the purges remembered.
const keepApplied = 4096

// remember adds applied purges to recent, dropping the oldest past
// keepApplied. The caller holds the gate.
func (t *Tier) remember(applied []numbered) {
	t.recent = append(t.recent, applied...)
	if over := len(t.recent) - keepApplied; over > 0 {
		t.recent = append(t.recent[:0], t.recent[over:]...)
	}
}

// evicted reports whether p's object, no longer in RAM, left it for room
// or by expiry rather than by a purge or a successor: no other object of
// its key is stored, and no purge since it was stored covers a variant.
func (t *Tier) evicted(p put) bool {
	key := []byte(p.o.Key)
	if t.c.Lookup(p.h, key) != nil {
		return false // replaced: the successor is copied on its own
	}
	for _, e := range p.o.Variants {
		if t.purgedSince(p, e) {
			return false
		}
	}
	return true
}

// purgedSince reports whether a purge applied since p's object was
// stored covers e, one of its variants, or may have: purges since then
// were forgotten. The caller holds the gate or is the writer.
func (t *Tier) purgedSince(p put, e *cache.Entry) bool {
	if len(t.recent) > 0 && t.recent[0].seq > p.seq+1 {
		return true
	}
	born := bornOf(e)
	for _, n := range t.recent {
		if n.seq > p.seq && covers(n.p, p.o.Key, e.Tags, born) {
			return true
		}
	}
	return false
}

func bornOf(e *cache.Entry) int64 {
	if e.Born == 0 {
		return e.Stored
	}
	return e.Born
}
