package cache

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A URL keeps the variants its visitors use, not the latest to arrive: a
// full object admits a newcomer only when it has been asked for more
// often than the least used variant it holds, which it then drops
// (TinyLFU's admission, per URL). Values of a selecting cookie or header
// that a client makes up are each asked for once, so a flood of them
// never pushes out the variants visitors use, and the plain variant,
// which every visitor without a selecting value gets, is never pushed out
// at all.

// maxUses saturates a count: past it a popular variant's lookups write
// nothing, so a hot page's cache line does not bounce between cores.
const maxUses = 255

// halfLife is how often the counts of a full object are halved, so that
// variants popular long ago give way; by the clock, so that a flood of
// requests cannot age the counts faster.
const halfLife = int64(time.Minute)

// useCount is one more use of a variant, up to maxUses.
func useCount(n *atomic.Uint32) {
	if n.Load() < maxUses {
		n.Add(1)
	}
}

// plainVariant reports whether v is the variant of a request without any
// of spec's selecting values: one NUL per value and nothing else.
func plainVariant(v string, spec *VarySpec) bool {
	return len(v) == len(spec.Headers)+len(spec.Cookies) && strings.Trim(v, "\x00") == ""
}

// admission counts the requests for variants a full object had no room
// for, in a few slots. It is shared by the object's successors.
type admission struct {
	mu    sync.Mutex
	aged  int64 // when the counts were last halved, cache clock
	hand  int   // where the search for a slot to reuse starts
	slots [admissionSlots]struct {
		h uint64
		n uint32
	}
}

const admissionSlots = 16

// newAdmission is the admission of an object of n variants selected by
// vary: nil until it is full (or when it has one variant only). A full
// object's successors share it, so that what it refused is remembered.
func newAdmission(vary *VarySpec, n, maxVariants int, now int64) *admission {
	if n < maxVariants || vary.Empty() {
		return nil
	}
	return &admission{aged: now}
}

// record counts one more request for the variant hashed h and returns
// its count. A variant not counted yet takes a slot of the least asked
// for, the next one round, so one-off values churn among themselves
// while a variant asked for again keeps its count.
func (a *admission) record(h uint64) uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	least := a.hand
	for i := range a.slots {
		s := &a.slots[i]
		if s.n > 0 && s.h == h {
			s.n = min(s.n+1, maxUses)
			return s.n
		}
		if j := (a.hand + i) % admissionSlots; a.slots[j].n < a.slots[least].n {
			least = j
		}
	}
	a.hand = (least + 1) % admissionSlots
	a.slots[least].h, a.slots[least].n = h, 1
	return 1
}

// forget frees the slot of h, which was admitted.
func (a *admission) forget(h uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.slots {
		if a.slots[i].h == h {
			a.slots[i].n = 0
		}
	}
}

// age halves the counts once per halfLife gone by and returns how many
// times, which the caller applies to the kept variants' counts too.
func (a *admission) age(now int64) uint {
	a.mu.Lock()
	defer a.mu.Unlock()
	halvings := min((now-a.aged)/halfLife, 8) // 8 empty a count of maxUses
	if halvings <= 0 {
		return 0
	}
	a.aged += halvings * halfLife
	for i := range a.slots {
		a.slots[i].n >>= halvings
	}
	return uint(halvings)
}
