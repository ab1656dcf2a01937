package sitestats

import (
	"container/heap"
	"slices"
	"strings"
)

// MaxURLLen bounds a listed URL in bytes; a longer one is cut there (and
// counted with the other URLs that share its first MaxURLLen bytes).
const MaxURLLen = 512

// URL is one entry of a site's list of URLs answered uncached.
type URL struct {
	URL string
	// Reason is why the latest of its requests was not cached: the
	// Cache-Status detail (set-cookie, no-ttl, private, vary-star,
	// too-large, …) or forward reason (bypass, method, uri-miss), or
	// "waf" for a request the WAF stopped.
	Reason string
	// Count is the number of its requests, overestimated by at most
	// Over: the count of the URL it replaced on a full list.
	Count, Over uint64
	Last        int64 // when it was last seen (unix seconds)
}

// top is a bounded list of the most requested URLs (Space-Saving,
// Metwally et al. 2005): a URL not on a full list replaces the least
// counted one and takes its count plus one, so a URL requested more
// often than the list's smallest count is always on it. It is not safe
// for concurrent use.
type top struct {
	max   int
	items map[string]*item
	h     minHeap
	key   []byte // the URL being looked up, reused
}

type item struct {
	URL
	idx int // in the heap
}

func newTop(n int) *top {
	return &top{max: n, items: map[string]*item{}}
}

// add counts one request of the URL scheme+host+uri for reason. It
// allocates only for a URL not on the list (or a changed reason).
func (t *top) add(scheme, host, uri, reason []byte, now int64) {
	if t.max <= 0 {
		return
	}
	t.key = append(append(append(t.key[:0], scheme...), host...), uri...)
	if len(t.key) > MaxURLLen {
		t.key = t.key[:MaxURLLen]
	}
	if it, ok := t.items[string(t.key)]; ok {
		it.Count++
		it.Last = now
		if it.Reason != string(reason) {
			it.Reason = string(reason)
		}
		heap.Fix(&t.h, it.idx)
		return
	}
	it := &item{URL: URL{URL: string(t.key), Reason: string(reason), Count: 1, Last: now}}
	if len(t.h) < t.max {
		heap.Push(&t.h, it)
	} else {
		least := t.h[0]
		delete(t.items, least.URL.URL)
		it.Count, it.Over, it.idx = least.Count+1, least.Count, 0
		t.h[0] = it
		heap.Fix(&t.h, 0)
	}
	t.items[it.URL.URL] = it
}

// resize bounds the list to n entries, dropping the least counted.
func (t *top) resize(n int) {
	t.max = n
	for len(t.h) > max(t.max, 0) {
		it := heap.Pop(&t.h).(*item)
		delete(t.items, it.URL.URL)
	}
}

// list is the URLs last seen at or after since, most requested first.
func (t *top) list(since int64) []URL {
	out := make([]URL, 0, len(t.h))
	for _, it := range t.h {
		if it.Last >= since {
			out = append(out, it.URL)
		}
	}
	slices.SortFunc(out, func(a, b URL) int {
		if a.Count != b.Count {
			return cmpDesc(a.Count, b.Count)
		}
		return strings.Compare(a.URL, b.URL)
	})
	return out
}

func cmpDesc(a, b uint64) int {
	if a > b {
		return -1
	}
	return 1
}

// minHeap orders items by count, least first (container/heap).
type minHeap []*item

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].Count < h[j].Count }
func (h minHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *minHeap) Push(x any) {
	it := x.(*item)
	it.idx = len(*h)
	*h = append(*h, it)
}
func (h *minHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}

var _ heap.Interface = (*minHeap)(nil)
