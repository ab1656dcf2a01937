package h2

import (
	"testing"
	"unsafe"
)

// TestCommonHeaderNamesAreSharedAndOthersInternedPerConnection: the
// header names most responses carry cost a connection no map of its own
// (an idle one kept one, about 0.8 KiB); another name is interned once
// per connection, and encoding it again allocates nothing.
func TestCommonHeaderNamesAreSharedAndOthersInternedPerConnection(t *testing.T) {
	var c conn
	for _, n := range []string{"content-type", "cache-status", "age", "etag", "date"} {
		if got := c.internName([]byte(n)); got != n {
			t.Fatalf("internName(%q) = %q", n, got)
		}
	}
	if c.names != nil {
		t.Fatalf("a connection that sent only common names has a names map of %d", len(c.names))
	}
	name := []byte("x-ramjet-test")
	first, again := c.internName(name), c.internName(name)
	if first != "x-ramjet-test" || unsafe.StringData(first) != unsafe.StringData(again) {
		t.Fatalf("internName twice: %q and %q, not one string", first, again)
	}
	if n := testing.AllocsPerRun(100, func() { c.internName(name); c.internName([]byte("content-length")) }); n != 0 {
		t.Fatalf("%v allocations per interned name, want 0", n)
	}
}
