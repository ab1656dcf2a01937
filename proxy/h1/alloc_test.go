//go:build !race

package h1

import (
	"io"
	"testing"
	"time"
)

// TestALaneHitAllocatesNothing: a keep-alive hit the lane answers, its
// whole round trip from the client's write to its read of the answer,
// allocates nothing once the pools are warm.
func TestALaneHitAllocatesNothing(t *testing.T) {
	e := newEnv(t)
	c, br := e.dial(t)
	send(t, c, getHit)
	readHit(t, br)
	c.SetDeadline(time.Time{}) // a deadline per round trip would allocate a timer
	req := []byte(getHit)
	send(t, c, getHit)
	first := make([]byte, 4096)
	n, err := c.Read(first)
	if err != nil {
		t.Fatal(err)
	}
	answer := make([]byte, n)
	roundTrip := func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, answer); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		roundTrip()
	}
	if allocs := testing.AllocsPerRun(200, roundTrip); allocs > 0 {
		t.Fatalf("%.1f allocations per lane hit, want 0", allocs)
	}
}
