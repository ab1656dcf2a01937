package conns

import (
	"testing"
	"unsafe"
)

// TestAConnFitsA240ByteAllocation: 10,000 parked connections each keep
// a Conn; the fields a served one needs (yield.go's held bytes among
// them) must not push it into the next size class (256 B).
func TestAConnFitsA240ByteAllocation(t *testing.T) {
	if n := unsafe.Sizeof(Conn{}); n > 240 {
		t.Fatalf("a Conn is %d bytes, want at most 240", n)
	}
}
