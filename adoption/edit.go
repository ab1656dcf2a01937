package adoption

import (
	"cmp"
	"fmt"
	"slices"
)

// Phase is how far a plan has moved the web server.
type Phase int

const (
	// Both: the web server serves on its public addresses (ready to
	// share them with ramjet) and on the loopback origin address.
	Both Phase = iota + 1
	// Moved: the web server serves on the loopback origin address only.
	Moved
)

// Edit replaces bytes [Start, End) of File with Text (an insertion when
// Start == End).
type Edit struct {
	File       string
	Start, End int
	Text       string
}

// ApplyEdits applies edits to the files' contents (file -> bytes) and
// returns the new contents of the files they touch. Edits of one file
// must not overlap.
func ApplyEdits(files map[string][]byte, edits []Edit) (map[string][]byte, error) {
	by := map[string][]Edit{}
	for _, e := range edits {
		by[e.File] = append(by[e.File], e)
	}
	out := map[string][]byte{}
	for f, es := range by {
		src, ok := files[f]
		if !ok {
			return nil, fmt.Errorf("adoption: edit of %s, which was not read", f)
		}
		slices.SortStableFunc(es, func(a, b Edit) int { return cmp.Compare(a.Start, b.Start) })
		var b []byte
		at := 0
		for _, e := range es {
			if e.Start < at || e.End < e.Start || e.End > len(src) {
				return nil, fmt.Errorf("adoption: overlapping edits of %s at byte %d", f, e.Start)
			}
			b = append(b, src[at:e.Start]...)
			b = append(b, e.Text...)
			at = e.End
		}
		out[f] = append(b, src[at:]...)
	}
	return out, nil
}
