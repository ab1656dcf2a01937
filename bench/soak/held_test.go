package main

import (
	"testing"
	"time"
)

func TestHeldPageIsJudgedUntilTheGraceOfTheFirstGapAfterItsFill(t *testing.T) {
	t0 := time.Unix(1000, 0)
	h := heldFrom(t0, 300, 0) // filled by t0, fresh for 300 s
	var g gapLog
	if !g.holds(h, t0.Add(time.Minute)) {
		t.Fatal("no gap: a fresh copy is not held")
	}
	if g.holds(h, t0.Add(300*time.Second)) {
		t.Fatal("held past its max-age")
	}
	g.add(t0.Add(20*time.Second), t0.Add(21*time.Second)) // covers fills up to 26 s
	g.add(t0.Add(25*time.Second), t0.Add(26*time.Second)) // up to 31 s
	if !g.holds(h, t0.Add(29*time.Second)) {
		t.Fatal("not held within the grace of the first gap after its fill")
	}
	if g.holds(h, t0.Add(31*time.Second)) {
		t.Fatal("held after the first gap's grace ran out (the second gap's does not count)")
	}
	noticed := heldFrom(t0.Add(24*time.Second), 300, 0) // filled before the node noticed the first gap
	if g.holds(noticed, t0.Add(31*time.Second)) {
		t.Fatal("a copy filled before the node could notice the gap is held past its grace")
	}
	later := heldFrom(t0.Add(40*time.Second), 300, 2) // filled after both gaps
	if !g.holds(later, t0.Add(90*time.Second)) {
		t.Fatal("a copy filled after the gaps is not held")
	}
	aged := heldFrom(t0.Add(26*time.Second), 300, 10) // a hit on a copy filled before the gaps
	if g.holds(aged, t0.Add(31*time.Second)) {
		t.Fatal("a copy whose Age puts its fill before a gap is held past that gap's grace")
	}
}
