package cache

import (
	"slices"
	"sync/atomic"
)

// VarySpec says which request values select a variant of an Object.
type VarySpec struct {
	Headers []string // lower-case request header names
	Cookies []string // cookie names
}

// Equal reports whether both specs select variants the same way.
func (v VarySpec) Equal(o VarySpec) bool {
	return slices.Equal(v.Headers, o.Headers) && slices.Equal(v.Cookies, o.Cookies)
}

// Empty reports whether the spec selects nothing (one variant only).
func (v VarySpec) Empty() bool { return len(v.Headers) == 0 && len(v.Cookies) == 0 }

// Object holds every stored variant of one primary key. It is immutable
// but for its variants' use counts; Cache.Insert replaces it.
type Object struct {
	Key      string
	Vary     VarySpec
	Variants []*Entry
	// Pass marks a key recently seen uncacheable: requests skip coalescing
	// until PassUntil.
	PassUntil int64
	size      int
	expiresAt int64
	// uses counts the lookups that found each variant (uses[i] is
	// Variants[i]'s), saturating at maxUses; nil when Vary is empty.
	uses []atomic.Uint32
	// seen counts the requests for variants refused for want of room;
	// nil until the object is full, then shared by its successors.
	seen *admission
}

// Variant returns the entry stored for the serialised vary values, or
// nil, and counts the use. It does not allocate.
func (o *Object) Variant(variant []byte) *Entry {
	for i, e := range o.Variants {
		if e.Variant == string(variant) {
			if i < len(o.uses) {
				useCount(&o.uses[i])
			}
			return e
		}
	}
	return nil
}

// kept is a variant an insert carries over, with its use count.
type kept struct {
	e    *Entry
	uses uint32
}

// withVariant returns o's successor holding e (hashed h), which replaces
// the entry of the same variant, and how many variants it left out for
// want of room; nil when e itself is refused. A change of vary spec drops
// the variants stored under the old spec: they were selected by other
// request values. Variants no longer servable at now are dropped first;
// past maxVariants, the admission decides (admission.go).
func (o *Object) withVariant(vary VarySpec, e *Entry, maxVariants int, now int64, h uint64) (*Object, int) {
	if !o.Vary.Equal(vary) {
		return newObject(o.Key, vary, e, 1, nil, newAdmission(&vary, 1, maxVariants, now)), 0
	}
	var others []kept
	uses := uint32(1) // the miss that fetched it
	for i, old := range o.Variants {
		n := uint32(1)
		if i < len(o.uses) {
			n = o.uses[i].Load()
		}
		switch {
		case old.Variant == e.Variant:
			uses = max(n, 1)
		case old.expires() > now:
			others = append(others, kept{old, n})
		}
	}
	seen := o.seen
	if seen == nil {
		seen = newAdmission(&vary, len(others)+1, maxVariants, now)
	}
	if len(others) < maxVariants {
		return newObject(o.Key, vary, e, uses, others, seen), 0
	}
	if halvings := seen.age(now); halvings > 0 {
		for i := range o.uses { // the stored object's too: e may be refused
			o.uses[i].Store(o.uses[i].Load() >> halvings)
		}
		for i := range others {
			others[i].uses >>= halvings
		}
	}
	victim := leastUsed(others, &vary)
	uses = seen.record(h)
	if victim < 0 || !plainVariant(e.Variant, &vary) && uses <= others[victim].uses {
		return nil, 1
	}
	seen.forget(h)
	others = append(others[:victim], others[victim+1:]...)
	return newObject(o.Key, vary, e, uses, others, seen), 1
}

// leastUsed is the index of the least used variant but the plain one
// (of equals the last, the oldest stored), or -1.
func leastUsed(vs []kept, spec *VarySpec) int {
	at := -1
	for i, v := range vs {
		if (at < 0 || v.uses <= vs[at].uses) && !plainVariant(v.e.Variant, spec) {
			at = i
		}
	}
	return at
}

// newObject holds e, with uses, then others.
func newObject(key string, vary VarySpec, e *Entry, uses uint32, others []kept, seen *admission) *Object {
	n := &Object{Key: key, Vary: vary, Variants: make([]*Entry, 0, 1+len(others)), seen: seen}
	n.Variants = append(n.Variants, e)
	for _, k := range others {
		n.Variants = append(n.Variants, k.e)
	}
	if !vary.Empty() {
		n.uses = make([]atomic.Uint32, len(n.Variants))
		n.uses[0].Store(uses)
		for i, k := range others {
			n.uses[i+1].Store(k.uses)
		}
	}
	n.account()
	return n
}

// copyUses gives n, whose variants are o's in the same order, o's counts.
func (o *Object) copyUses(n *Object) {
	n.seen = o.seen
	if len(o.uses) == 0 {
		return
	}
	n.uses = make([]atomic.Uint32, len(o.uses))
	for i := range o.uses {
		n.uses[i].Store(o.uses[i].Load())
	}
}

func (o *Object) account() {
	o.size = objectOverhead + len(o.Key)
	o.expiresAt = o.PassUntil
	for _, e := range o.Variants {
		o.size += e.Size()
		o.expiresAt = max(o.expiresAt, e.expires())
	}
}
