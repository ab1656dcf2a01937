package proxy

import (
	"container/heap"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// warmCandidate is one page a purge dropped or made stale, as the
// warm-up fetches it again: its key, the request fields its variant was
// selected by, and how popular it was when the purge came. It holds no
// body: the list stays small however large the pages.
type warmCandidate struct {
	key     string
	h       uint64
	vary    cache.VarySpec
	variant string
	score   uint32
	// pop is the dropped entry's counter, which the page fetched again
	// adopts; nil: none (a gap's refresh, which keeps its entry's).
	pop *cache.Popularity
	// gap: a fan-out gap's refresh (gapwarm.go), counted as one.
	gap bool
}

// id tells two candidates of one page apart: key and variant.
func (c *warmCandidate) id() string { return c.key + "\x00\x00" + c.variant }

// warmList keeps the most popular candidates of one site, at most max:
// a purge of everything may drop a million pages, and the warm-up never
// fetches more than its best max anyway. It is not safe for concurrent
// use (warmState's mutex guards it).
type warmList struct {
	max   int
	items warmHeap
	at    map[string]*warmItem // by id
	// dropped counts the candidates left out for want of room.
	dropped int
}

type warmItem struct {
	warmCandidate
	i int // index in the heap
}

// add offers c; a candidate already listed keeps the higher score. When
// the list is full, c replaces the least popular one if it is more
// popular. It reports whether c is listed.
func (l *warmList) add(c warmCandidate) bool {
	if l.max <= 0 {
		l.dropped++
		return false
	}
	if l.at == nil {
		l.at = map[string]*warmItem{}
	}
	id := c.id()
	if it, ok := l.at[id]; ok {
		if c.score > it.score {
			it.warmCandidate = c
			heap.Fix(&l.items, it.i)
		}
		return true
	}
	if len(l.items) >= l.max {
		least := l.items[0] // the heap's root: a purge of a million pages offers each in O(log max)
		if least.score >= c.score {
			l.dropped++
			return false
		}
		l.dropped++
		delete(l.at, least.id())
		heap.Pop(&l.items)
	}
	it := &warmItem{warmCandidate: c}
	heap.Push(&l.items, it)
	l.at[id] = it
	return true
}

// pop takes the most popular candidate out; false when there is none.
// It looks through the list: pops come at the warm-up's rate, adds at a
// purge's, so the heap keeps the least popular at hand instead.
func (l *warmList) pop() (warmCandidate, bool) {
	if len(l.items) == 0 {
		return warmCandidate{}, false
	}
	best := 0
	for i := 1; i < len(l.items); i++ {
		if l.items.Less(best, i) {
			best = i
		}
	}
	it := heap.Remove(&l.items, best).(*warmItem)
	delete(l.at, it.id())
	return it.warmCandidate, true
}

func (l *warmList) len() int { return len(l.items) }

// warmHeap is a min-heap by popularity: the least popular candidate,
// the one a better one replaces, is its root. Of equal scores the last
// key in order is the least, so that pop's order (most popular, then
// the first key) is the same every run.
type warmHeap []*warmItem

func (h warmHeap) Len() int { return len(h) }
func (h warmHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].key > h[j].key
}
func (h warmHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}
func (h *warmHeap) Push(x any) {
	it := x.(*warmItem)
	it.i = len(*h)
	*h = append(*h, it)
}
func (h *warmHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}

var _ heap.Interface = (*warmHeap)(nil)
