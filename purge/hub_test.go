package purge

import (
	"slices"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestHubAppliesLocallyCountsAndPublishes(t *testing.T) {
	r := startRedis(t)
	a := newNode(t, r.URL, "A", nil)
	b := newNode(t, r.URL, "B", nil)
	waitConnected(t, a, b)
	local := newRecorder()
	set := metrics.NewSet()
	hub := NewHub(local, a.Fanout, set)

	if res := hub.Apply(tagCmd("x"), SourceHeader); res.Tags != 1 {
		t.Errorf("Apply returned %+v, want the local result", res)
	}
	// Applied locally before Apply returns, whatever Redis does.
	if got := tags(local.all()); !slices.Equal(got, []string{"x"}) {
		t.Errorf("local got %v right after Apply", got)
	}
	private := tagCmd("mine")
	private.Private, private.Identity = true, "session-1"
	hub.Apply(private, SourceHeader)
	hub.Apply(Command{}, SourceAPI) // nothing to purge: not published
	hub.Apply(tagCmd("fence"), SourceAPI)
	b.rec.waitFor(t, "fence on B", has("fence"))

	if got := tags(b.rec.all()); !slices.Equal(got, []string{"x", "fence"}) {
		t.Errorf("B got %v, want x fence (private and empty commands stay local)", got)
	}
	if got := tags(local.all()); !slices.Equal(got, []string{"x", "mine", "fence"}) {
		t.Errorf("local got %v", got)
	}
	n := &node{set: set}
	for src, want := range map[string]float64{SourceHeader: 2, SourceAPI: 2, SourceMethod: 0, SourceCLI: 0} {
		if got := n.metric(t, purgesTotal(src)); got != want {
			t.Errorf("%s = %v, want %v", purgesTotal(src), got, want)
		}
	}
	// Counted once XADD returns, which may be after B read the entry.
	testbed.WaitFor(t, wait, "A counted 2 published", func() bool { return a.metric(t, "ramjet_purge_fanout_published_total") == 2 })
}

func TestHubOnSingleNode(t *testing.T) {
	local := newRecorder()
	hub := NewHub(local, nil, nil)
	hub.Apply(tagCmd("x"), SourceMethod)
	hub.Apply(tagCmd("y"), "other") // an unknown source is counted, not refused
	if got := tags(local.all()); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("local got %v", got)
	}

	set := metrics.NewSet()
	NewHub(local, nil, set).Apply(tagCmd("z"), "other")
	if got := (&node{set: set}).metric(t, purgesTotal("other")); got != 1 {
		t.Errorf("other source counted %v times", got)
	}
}
