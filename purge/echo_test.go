package purge

import (
	"slices"
	"testing"
)

// Two processes of one node (an upgrade: the old one answers its kept
// connections while the new one serves) share the node's name: each must
// apply what the other published, and neither its own echo.
func TestFanoutProcessesOfOneNodeApplyEachOthersPurges(t *testing.T) {
	r := startRedis(t)
	old := newNode(t, r.URL, "A", nil)
	next := newNode(t, r.URL, "A", nil)
	b := newNode(t, r.URL, "B", nil)
	waitConnected(t, old, next, b)

	next.Publish(tagCmd("by-new"))
	old.rec.waitFor(t, "the new process's purge on the old one", has("by-new"))
	old.Publish(tagCmd("by-old"))
	next.rec.waitFor(t, "the old process's purge on the new one", has("by-old"))
	b.Publish(tagCmd("fence"))
	for _, n := range []*node{old, next} {
		n.rec.waitFor(t, "fence", has("fence"))
	}
	want := map[*node][]string{old: {"by-new", "fence"}, next: {"by-old", "fence"}, b: {"by-new", "by-old"}}
	b.rec.waitFor(t, "both on B", hasAll("by-new", "by-old"))
	for n, w := range want {
		if got := tags(n.rec.all()); !slices.Equal(got, w) {
			t.Errorf("%s applied %v, want %v", n.cfg.Node, got, w)
		}
	}
}

// An entry of the node's name without a process id comes from a ramjet
// that did not write one: taken for this node's echo, as before.
func TestFanoutEntryOfItsNameWithoutProcessIsAnEcho(t *testing.T) {
	f := &Fanout{cfg: FanoutConfig{Node: "A"}, proc: "p1"}
	for _, c := range []struct {
		values map[string]any
		echo   bool
	}{
		{map[string]any{"node": "A", "proc": "p1"}, true},
		{map[string]any{"node": "A"}, true},
		{map[string]any{"node": "A", "proc": "p2"}, false},
		{map[string]any{"node": "B", "proc": "p1"}, false},
		{map[string]any{"node": "B"}, false},
	} {
		if got := f.echo(c.values); got != c.echo {
			t.Errorf("echo(%v) = %v, want %v", c.values, got, c.echo)
		}
	}
}
