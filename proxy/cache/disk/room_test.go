package disk

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// dirBytes is the bytes of the entry files in dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, f := range files(t, dir) {
		if st, err := os.Stat(f); err == nil { // gone meanwhile: evicted
			n += st.Size()
		}
	}
	return n
}

// A batch of copies larger than the tier's size never takes its
// directory more than one file past it: the oldest files go before the
// batch is written, and as its files fill the room, not once the whole
// batch is indexed.
func TestBatchOfCopiesNeverTakesTheDirectoryPastTheTiersSize(t *testing.T) {
	dir := t.TempDir()
	const page, pages, size = 30 << 10, 24, 6 * (32 << 10) // six pages and their heads
	n := open(t, dir, 64<<20, Config{Size: size}, false)   // no writer yet: the copies wait in one batch
	for i := range pages {
		store(n, fmt.Sprintf("http://s/%d", i), cache.VarySpec{}, entry("", strings.Repeat("x", page)))
	}
	n.t.Start(t.Context())
	most := int64(0)
	// polls the directory while the writer writes: no event marks a file's write
	for n.t.Snapshot().Written < pages {
		most = max(most, dirBytes(t, dir))
	}
	most = max(most, dirBytes(t, dir))
	const file = 2*page + 1<<10 // a page's file: its body, its gzip copy and its head
	if most > size+file {
		t.Fatalf("the directory held %d bytes of files, more than a file over the tier's %d", most, size)
	}
	if got := dirBytes(t, dir); got < size/2 {
		t.Fatalf("%d bytes left of a %d-byte tier: the newest copies should fill it", got, size)
	}
}
