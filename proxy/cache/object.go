package cache

import "slices"

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

// Object holds every stored variant of one primary key. It is immutable;
// Cache.Insert replaces it.
type Object struct {
	Key      string
	Vary     VarySpec
	Variants []*Entry
	// Pass marks a key recently seen uncacheable: requests skip coalescing
	// until PassUntil.
	PassUntil int64
	size      int
	expiresAt int64
}

// Variant returns the entry stored for the serialised vary values, or nil.
func (o *Object) Variant(variant []byte) *Entry {
	for _, e := range o.Variants {
		if e.Variant == string(variant) {
			return e
		}
	}
	return nil
}

// withVariant returns a copy of o holding e, replacing the entry of the
// same variant. A change of vary spec drops the variants stored under the
// old spec: they were selected by other request values.
// withVariant is o with e as its newest variant, the oldest dropped past
// maxVariants.
func (o *Object) withVariant(vary VarySpec, e *Entry, maxVariants int) *Object {
	n := &Object{Key: o.Key, Vary: vary}
	n.Variants = append(n.Variants, e)
	if o.Vary.Equal(vary) {
		for _, old := range o.Variants {
			if old.Variant != e.Variant && len(n.Variants) < maxVariants {
				n.Variants = append(n.Variants, old)
			}
		}
	}
	n.account()
	return n
}

// capped is how many variants of o other than variant n, its successor
// under the same vary spec, left out for want of room.
func (o *Object) capped(n *Object, variant string) int {
	if !o.Vary.Equal(n.Vary) {
		return 0 // a new vary spec replaces them all: not the cap
	}
	others := 0
	for _, v := range o.Variants {
		if v.Variant != variant {
			others++
		}
	}
	return others - (len(n.Variants) - 1)
}

func (o *Object) account() {
	o.size = objectOverhead + len(o.Key)
	o.expiresAt = o.PassUntil
	for _, e := range o.Variants {
		o.size += e.Size()
		o.expiresAt = max(o.expiresAt, e.expires())
	}
}
