package purge

import (
	"slices"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// A node that stops and comes back with the position it stopped at reads
// the purges published meanwhile, with no gap; without it, it would start
// at the stream's end and miss them.
func TestFanoutResumedNodeAppliesWhatWasPublishedWhileItWasDown(t *testing.T) {
	r := startRedis(t)
	a := newNode(t, r.URL, "A", nil)
	b := newNode(t, r.URL, "B", nil)
	waitConnected(t, a, b)
	a.Publish(tagCmd("before"))
	b.rec.waitFor(t, "before on B", has("before"))
	<-b.CaughtUp()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	pos, ok := b.Position()
	if !ok {
		t.Fatal("no position after Close")
	}
	a.Publish(tagCmd("while-down"))
	testbed.WaitFor(t, wait, "A published 2", func() bool { return a.metric(t, "ramjet_purge_fanout_published_total") == 2 })

	back := newNode(t, r.URL, "B", func(c *FanoutConfig) { c.Resume = &pos })
	<-back.CaughtUp()
	if got := tags(back.rec.all()); !slices.Equal(got, []string{"while-down"}) {
		t.Fatalf("resumed node applied %v, want [while-down]", got)
	}
	if got := back.gaps(t); got != 0 {
		t.Errorf("resumed node marked %v gaps", got)
	}
}

func TestFanoutResumeRefusesABadPosition(t *testing.T) {
	_, err := NewFanout(FanoutConfig{URL: "redis://127.0.0.1:1/0", Node: "n", Resume: &Position{ID: "x"}}, newRecorder(), nil, nil)
	if err == nil {
		t.Fatal("a bad stream ID was accepted")
	}
}
