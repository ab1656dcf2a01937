package cache

import "sync/atomic"

// Tally counts the entries and bytes one owner (a site) holds in a cache,
// for per-site metrics of a cache that several sites share. An entry
// names its tally; every object that enters the store adds its variants
// and every object that leaves it (replaced, purged, evicted, expired)
// takes them away again, so the tally follows the store without a scan.
type Tally struct {
	entries, bytes atomic.Int64
}

// Entries is the number of stored variants that name t.
func (t *Tally) Entries() int64 { return t.entries.Load() }

// Bytes is their size as charged against the cache.
func (t *Tally) Bytes() int64 { return t.bytes.Load() }

// tally adds (sign 1) or removes (-1) o's variants from their tallies.
func (o *Object) tally(sign int64) {
	for _, e := range o.Variants {
		if e.Tally != nil {
			e.Tally.entries.Add(sign)
			e.Tally.bytes.Add(sign * int64(e.Size()))
		}
	}
}
