package purge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/go-redis/v9"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// wait bounds every wait in these tests.
const wait = 15 * time.Second

// recorder is a fake Invalidator that records every command it gets.
type recorder struct {
	mu      sync.Mutex // guards cmds, at, changed
	cmds    []Command
	at      []time.Time   // when each command was applied, truncated to ms
	changed chan struct{} // closed and replaced on every Purge

	// If hold is set, Purge signals held (capacity 1) and then blocks
	// until hold is closed.
	hold, held chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) Purge(cmd Command) Result {
	if r.hold != nil {
		select {
		case r.held <- struct{}{}:
		default:
		}
		<-r.hold
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = append(r.cmds, cmd)
	r.at = append(r.at, time.Now().Truncate(time.Millisecond))
	close(r.changed)
	r.changed = make(chan struct{})
	return Result{Tags: len(cmd.Targets)}
}

// since returns the commands from the i-th on and when they were applied.
func (r *recorder) since(i int) ([]Command, []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.cmds[i:]), slices.Clone(r.at[i:])
}

func (r *recorder) all() []Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.cmds)
}

// waitFor waits until ok holds for the recorded commands.
func (r *recorder) waitFor(t testing.TB, what string, ok func([]Command) bool) {
	t.Helper()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		cmds, ch := slices.Clone(r.cmds), r.changed
		r.mu.Unlock()
		if ok(cmds) {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s; got %s", what, describe(cmds))
		}
	}
}

func tagCmd(tag string) Command { return Command{Targets: []Target{{Kind: KindTag, Value: tag}}} }

// tags lists the tag of each tag command and "ALL" for each flush.
func tags(cmds []Command) []string {
	var out []string
	for _, c := range cmds {
		for _, tg := range c.Targets {
			switch tg.Kind {
			case KindAll:
				out = append(out, "ALL")
			default:
				out = append(out, tg.Value)
			}
		}
	}
	return out
}

func describe(cmds []Command) string {
	t := tags(cmds)
	if len(t) > 20 {
		return fmt.Sprintf("%d commands: %v … %v", len(t), t[:10], t[len(t)-10:])
	}
	return fmt.Sprint(t)
}

func has(tag string) func([]Command) bool {
	return func(cmds []Command) bool { return slices.Contains(tags(cmds), tag) }
}

func hasAll(want ...string) func([]Command) bool {
	return func(cmds []Command) bool {
		got := tags(cmds)
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		return true
	}
}

// node is one Fanout with its fake cache and metrics.
type node struct {
	*Fanout
	rec *recorder
	set *metrics.Set
}

func newNode(t testing.TB, url, name string, tweak func(*FanoutConfig)) *node {
	t.Helper()
	n := unstartedNode(t, url, name, nil, tweak)
	if err := n.Start(context.Background()); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	return n
}

// unstartedNode makes a node applying to inv, or to a recorder if nil.
func unstartedNode(t testing.TB, url, name string, inv Invalidator, tweak func(*FanoutConfig)) *node {
	t.Helper()
	cfg := FanoutConfig{URL: url, Node: name}
	if tweak != nil {
		tweak(&cfg)
	}
	n := &node{rec: newRecorder(), set: metrics.NewSet()}
	if inv == nil {
		inv = n.rec
	}
	f, err := NewFanout(cfg, inv, testLogger(t), n.set)
	if err != nil {
		t.Fatalf("new fanout %s: %v", name, err)
	}
	n.Fanout = f
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("close %s: %v", name, err)
		}
	})
	return n
}

// metric reads one sample from the node's metrics set.
func (n *node) metric(t testing.TB, name string) float64 {
	t.Helper()
	var buf bytes.Buffer
	n.set.WritePrometheus(&buf)
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", name, err)
			}
			return f
		}
	}
	return 0
}

// gaps sums the node's gap counters over their reasons.
func (n *node) gaps(t testing.TB) float64 {
	t.Helper()
	var buf bytes.Buffer
	n.set.WritePrometheus(&buf)
	sum := 0.0
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "ramjet_purge_fanout_gaps_total{") {
			continue
		}
		_, v, _ := strings.Cut(sc.Text(), "} ")
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("gaps metric %q: %v", sc.Text(), err)
		}
		sum += f
	}
	return sum
}

func waitConnected(t testing.TB, nodes ...*node) {
	t.Helper()
	for _, n := range nodes {
		testbed.WaitFor(t, wait, n.cfg.Node+" connected", func() bool { return n.State() == StateConnected })
	}
}

func rawClient(t testing.TB, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() }) // test teardown
	return c
}

func TestFanoutAppliesOnOtherNodesOnce(t *testing.T) {
	r := startRedis(t)
	a := newNode(t, r.URL, "A", nil)
	b := newNode(t, r.URL, "B", nil)
	c := newNode(t, r.URL, "C", nil)
	waitConnected(t, a, b, c)

	// Entries are read in order: once a node has applied a fence, it has
	// processed everything published before it, its own echoes too.
	a.Publish(tagCmd("x"))
	c.rec.waitFor(t, "x on C", has("x"))
	b.Publish(tagCmd("fence"))
	a.rec.waitFor(t, "fence on A", has("fence"))
	c.rec.waitFor(t, "fence on C", has("fence"))
	a.Publish(tagCmd("fence2"))
	b.rec.waitFor(t, "fence2 on B", has("fence2"))
	c.rec.waitFor(t, "fence2 on C", has("fence2"))

	want := map[*node][]string{a: {"fence"}, b: {"x", "fence2"}, c: {"x", "fence", "fence2"}}
	for n, w := range want {
		if got := tags(n.rec.all()); !slices.Equal(got, w) {
			t.Errorf("%s applied %v, want %v", n.cfg.Node, got, w)
		}
	}
	// Counted once the local purge returns, after the recorder saw it.
	testbed.WaitFor(t, wait, "C counted 3 applied", func() bool { return c.metric(t, "ramjet_purge_fanout_applied_total") == 3 })
	if got := c.metric(t, "ramjet_purge_fanout_lag_seconds_count"); got != 3 {
		t.Errorf("C lag samples = %v, want 3", got)
	}
	// Counted once XADD returns, which may be after the others read it.
	testbed.WaitFor(t, wait, "A counted 2 published", func() bool { return a.metric(t, "ramjet_purge_fanout_published_total") == 2 })
	for _, n := range []*node{a, b, c} {
		if got := n.gaps(t); got != 0 {
			t.Errorf("%s flushed %v times", n.cfg.Node, got)
		}
		if got := n.metric(t, "ramjet_redis_connected"); got != 1 {
			t.Errorf("%s ramjet_redis_connected = %v", n.cfg.Node, got)
		}
	}
}

// One node loses Redis while the others keep it: what it publishes meanwhile
// waits in its queue and reaches everyone after, with no flush anywhere.
func TestFanoutDeliversPurgesQueuedDuringPartition(t *testing.T) {
	r := startRedis(t)
	link := startCut(t, r.Addr)
	a := newNode(t, link.URL(), "A", nil)
	b := newNode(t, r.URL, "B", nil)
	c := newNode(t, r.URL, "C", nil)
	waitConnected(t, a, b, c)

	link.Cut()
	for i := range 3 {
		a.Publish(tagCmd("x" + strconv.Itoa(i)))
	}
	testbed.WaitFor(t, wait, "A disconnected", func() bool { return a.State() == StateDisconnected })
	if got := a.metric(t, "ramjet_purge_fanout_queue"); got != 3 {
		t.Errorf("A queue = %v during the partition, want 3", got)
	}
	link.Mend()
	for _, n := range []*node{b, c} {
		n.rec.waitFor(t, "x0..x2 on "+n.cfg.Node, hasAll("x0", "x1", "x2"))
		if got := tags(n.rec.all()); !slices.Equal(got, []string{"x0", "x1", "x2"}) {
			t.Errorf("%s applied %v, want x0 x1 x2 in order", n.cfg.Node, got)
		}
	}
	waitConnected(t, a)
	for _, n := range []*node{a, b, c} {
		if got := n.gaps(t); got != 0 {
			t.Errorf("%s flushed %v times; nothing was lost", n.cfg.Node, got)
		}
	}
}

// Redis dies and comes back empty on the same port: purges published
// meanwhile reach every node after recovery, or the node flushed.
func TestFanoutSurvivesRedisRestart(t *testing.T) {
	r := startRedis(t)
	a := newNode(t, r.URL, "A", nil)
	b := newNode(t, r.URL, "B", nil)
	c := newNode(t, r.URL, "C", nil)
	waitConnected(t, a, b, c)
	a.Publish(tagCmd("before"))
	b.rec.waitFor(t, "before on B", has("before"))
	c.rec.waitFor(t, "before on C", has("before"))

	r.Kill()
	xs := []string{"x0", "x1", "x2"}
	for _, x := range xs {
		a.Publish(tagCmd(x))
	}
	testbed.WaitFor(t, wait, "A disconnected", func() bool { return a.State() == StateDisconnected })
	mark := map[*node]int{a: len(a.rec.all()), b: len(b.rec.all()), c: len(c.rec.all())}
	r.Restart(t)

	testbed.WaitFor(t, wait, "A published all", func() bool { return a.metric(t, "ramjet_purge_fanout_published_total") == 4 })
	for _, n := range []*node{a, b, c} {
		// The epoch changed: every node flushes once.
		testbed.WaitFor(t, wait, n.cfg.Node+" flushed", func() bool { return n.gaps(t) >= 1 })
	}
	// A flush supersedes what was published before it; a fence published
	// after every flush is read by all, and after the xs.
	c.Publish(tagCmd("fence"))
	for _, n := range []*node{a, b} {
		n.rec.waitFor(t, "fence on "+n.cfg.Node, has("fence"))
	}
	waitConnected(t, a, b, c)

	// When did each x enter the new stream? Entry IDs are Redis's clock
	// in ms, on this host.
	added := map[string]time.Time{}
	entries, err := rawClient(t, r.URL).XRange(context.Background(), defaultStream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var cmd Command
		if err := json.Unmarshal([]byte(e.Values["cmd"].(string)), &cmd); err != nil {
			t.Fatal(err)
		}
		id, err := parseStreamID(e.ID)
		if err != nil {
			t.Fatal(err)
		}
		added[cmd.Targets[0].Value] = time.UnixMilli(int64(id.ms))
	}
	for _, n := range []*node{a, b, c} {
		if got := n.gaps(t); got != 1 {
			t.Errorf("%s flushed %v times, want 1 (new Redis instance)", n.cfg.Node, got)
		}
		if n == a {
			continue
		}
		cmds, at := n.rec.since(mark[n])
		for _, x := range xs {
			if _, ok := added[x]; !ok {
				t.Fatalf("%s not in the stream after recovery", x)
			}
			ok := false
			for i, cmd := range cmds {
				tg := cmd.Targets[0]
				// Applied, or flushed no earlier than the ms x was added.
				ok = ok || tg.Value == x || (tg.Kind == KindAll && !at[i].Before(added[x]))
			}
			if !ok {
				t.Errorf("%s lost %s: neither applied nor covered by a later flush: %v", n.cfg.Node, x, tags(cmds))
			}
		}
	}
}

// A node that stops reading while the stream is trimmed past its last ID
// flushes when it resumes from that ID; a node that kept up does not,
// although the stream was trimmed.
func TestFanoutFlushesWhenTrimmedPastItsPosition(t *testing.T) {
	r := startRedis(t)
	tiny := func(c *FanoutConfig) { c.MaxLen = 10 }
	a := newNode(t, r.URL, "A", tiny)
	b := newNode(t, r.URL, "B", nil)
	c := newNode(t, r.URL, "C", nil)
	waitConnected(t, a, b, c)
	a.Publish(tagCmd("warm"))
	b.rec.waitFor(t, "warm on B", has("warm"))
	c.rec.waitFor(t, "warm on C", has("warm"))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	old := b.cur // the subscriber is joined: safe to read

	const rounds, per = 40, 10
	for i := range rounds {
		var last string
		for j := range per {
			last = fmt.Sprintf("n%d-%d", i, j)
			a.Publish(tagCmd(last))
		}
		c.rec.waitFor(t, last+" on C", has(last)) // C keeps up
	}
	info, err := rawClient(t, r.URL).XInfoStream(context.Background(), defaultStream).Result()
	if err != nil {
		t.Fatal(err)
	}
	if trimmed := info.EntriesAdded - info.Length; trimmed <= old.seen {
		t.Fatalf("stream trimmed %d entries, not past B's position %d: test proves nothing", trimmed, old.seen)
	}

	b2 := unstartedNode(t, r.URL, "B", nil, nil)
	b2.cur = old // resume where B stopped
	if err := b2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	b2.rec.waitFor(t, "flush on B", has("ALL"))
	if got := b2.gaps(t); got != 1 {
		t.Errorf("B flushed %v times, want 1", got)
	}
	if got := c.gaps(t); got != 0 {
		t.Errorf("C flushed %v times although it kept up", got)
	}
	if got := len(c.rec.all()); got != 1+rounds*per {
		t.Errorf("C applied %d purges, want %d", got, 1+rounds*per)
	}
}

// A subscriber stuck applying one entry while the stream is trimmed past
// it notices on its next read, without any reconnect.
func TestFanoutFlushesWhenStalledPastTrim(t *testing.T) {
	r := startRedis(t)
	a := newNode(t, r.URL, "A", func(c *FanoutConfig) { c.MaxLen = 10 })
	b := unstartedNode(t, r.URL, "B", nil, nil)
	gate := make(chan struct{})
	b.rec.hold, b.rec.held = gate, make(chan struct{}, 1)
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, a, b)

	a.Publish(tagCmd("first"))
	select {
	case <-b.rec.held:
	case <-time.After(wait):
		t.Fatal("B never applied first")
	}
	for i := range 500 {
		a.Publish(tagCmd("n" + strconv.Itoa(i)))
	}
	testbed.WaitFor(t, wait, "A published all", func() bool { return a.metric(t, "ramjet_purge_fanout_published_total") == 501 })
	close(gate)
	b.rec.waitFor(t, "flush on B", has("ALL"))
	if got := b.gaps(t); got != 1 {
		t.Errorf("B flushed %v times, want 1", got)
	}
}

func TestFanoutFlushesWhenStreamDeleted(t *testing.T) {
	r := startRedis(t)
	a := newNode(t, r.URL, "A", nil)
	b := newNode(t, r.URL, "B", nil)
	waitConnected(t, a, b)
	a.Publish(tagCmd("x"))
	b.rec.waitFor(t, "x on B", has("x"))

	if err := rawClient(t, r.URL).Del(context.Background(), defaultStream).Err(); err != nil {
		t.Fatal(err)
	}
	b.rec.waitFor(t, "flush on B", has("ALL"))
	// Once flushed, the missing stream is no longer news.
	a.Publish(tagCmd("y"))
	b.rec.waitFor(t, "y on B", has("y"))
	if got := tags(b.rec.all()); !slices.Equal(got, []string{"x", "ALL", "y"}) {
		t.Errorf("B applied %v, want x ALL y", got)
	}
}

// Publish returns at once whatever Redis does; an overflowing queue turns
// into one purge-everything for the other nodes and no flush here.
func TestFanoutPublishNeverBlocks(t *testing.T) {
	r := startRedis(t)
	link := startCut(t, r.Addr)
	a := newNode(t, link.URL(), "A", func(c *FanoutConfig) { c.Queue = 100 })
	b := newNode(t, r.URL, "B", nil)
	waitConnected(t, a, b)

	link.Cut()
	const n = 100000
	start := time.Now()
	for i := range n {
		a.Publish(tagCmd("n" + strconv.Itoa(i)))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("%d Publish calls with Redis unreachable took %v", n, d)
	}
	if q := a.metric(t, "ramjet_purge_fanout_queue"); q > 100 {
		t.Errorf("queue holds %v purges, bound is 100", q)
	}
	if d := a.metric(t, "ramjet_purge_fanout_dropped_total"); d == 0 {
		t.Error("no drop counted")
	}
	link.Mend()
	last := "n" + strconv.Itoa(n-1)
	b.rec.waitFor(t, "ALL and "+last+" on B", hasAll("ALL", last))
	if got := b.gaps(t); got != 0 {
		t.Errorf("B counted %v gap flushes; the ALL came from A", got)
	}
	if got := a.gaps(t); got != 0 {
		t.Errorf("A flushed %v times; it lost nothing locally", got)
	}
}

// A node that could not reach Redis when it started may have cached pages
// whose purges it never read: it flushes once connected.
func TestFanoutFlushesWhenConnectedLate(t *testing.T) {
	r := startRedis(t)
	link := startCut(t, r.Addr)
	link.Cut()
	a := newNode(t, link.URL(), "A", nil)
	b := newNode(t, r.URL, "B", nil)
	// go-redis opens two connections per failed attempt (the RESP3
	// handshake, then RESP2), and only A's subscriber dials: a third one
	// means a placement failed.
	testbed.WaitFor(t, wait, "A refused", func() bool { return link.refused.Load() >= 3 })
	if s := a.State(); s != StateConnecting {
		t.Errorf("A state %q, want %q", s, StateConnecting)
	}
	link.Mend()
	a.rec.waitFor(t, "flush on A", has("ALL"))
	waitConnected(t, a, b)
	b.Publish(tagCmd("x"))
	a.rec.waitFor(t, "x on A", has("x"))
	if got := a.gaps(t); got != 1 {
		t.Errorf("A flushed %v times, want 1", got)
	}
	if got := b.gaps(t); got != 0 {
		t.Errorf("B flushed %v times although it connected at once", got)
	}
}

func TestFanoutWithoutRedis(t *testing.T) {
	port := testbed.FreePort(t)
	a := newNode(t, fmt.Sprintf("redis://127.0.0.1:%d/0", port), "A", func(c *FanoutConfig) {
		c.Queue = 10
		c.DrainTimeout = 100 * time.Millisecond
	})
	start := time.Now()
	for i := range 10000 {
		a.Publish(tagCmd("n" + strconv.Itoa(i)))
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Publish with no Redis took %v", d)
	}
	testbed.WaitFor(t, wait, "A disconnected", func() bool { return !a.pubUp.Load() })
	if s := a.State(); s != StateConnecting {
		t.Errorf("state %q, want %q", s, StateConnecting)
	}
	start = time.Now()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with Redis down and DrainTimeout 100ms", d)
	}
	if s := a.State(); s != StateClosed {
		t.Errorf("state %q after Close", s)
	}
}

func TestFanoutCloseWaitsForGoroutines(t *testing.T) {
	r := startRedis(t)
	dead := testbed.FreePort(t)
	before := runtime.NumGoroutine()

	var nodes []*Fanout
	for i, url := range []string{r.URL, r.URL, r.URL, fmt.Sprintf("redis://127.0.0.1:%d/0", dead)} {
		f, err := NewFanout(FanoutConfig{URL: url, Node: strconv.Itoa(i), DrainTimeout: 100 * time.Millisecond}, newRecorder(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := f.Start(context.Background()); err == nil {
			t.Error("second Start succeeded")
		}
		nodes = append(nodes, f)
	}
	for _, f := range nodes[:3] {
		testbed.WaitFor(t, wait, "connected", func() bool { return f.State() == StateConnected })
		f.Publish(tagCmd("x"))
	}
	for _, f := range nodes {
		start := time.Now()
		if err := f.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		// A subscriber blocked in XREAD is woken, not waited for.
		if d := time.Since(start); d > readBlock/2 && f.everUp.Load() {
			t.Errorf("Close took %v", d)
		}
		if err := f.Close(); err != nil {
			t.Errorf("second close: %v", err)
		}
		if err := f.Start(context.Background()); err == nil {
			t.Error("Start after Close succeeded")
		}
	}
	var last int
	if !testbed.Poll(5*time.Second, func() bool { last = runtime.NumGoroutine(); return last <= before }) {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Close, %d before:\n%s", last, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestFanoutQueueKeepsOrder(t *testing.T) {
	var q fifo
	next, want := 0, 0
	for round := range 200 {
		for range round % 7 {
			q.push(pending{ts: int64(next)})
			next++
		}
		batch := q.peek(nil, round%5)
		for _, p := range batch {
			if p.ts != int64(want) {
				t.Fatalf("round %d: got %d, want %d", round, p.ts, want)
			}
			want++
		}
		q.pop(len(batch))
		if q.len() != next-want {
			t.Fatalf("round %d: len %d, want %d", round, q.len(), next-want)
		}
	}
}

func TestFanoutConfigDefaults(t *testing.T) {
	rec := newRecorder()
	if _, err := NewFanout(FanoutConfig{URL: "redis://127.0.0.1:1/0"}, rec, nil, nil); err == nil {
		t.Error("no node name accepted")
	}
	if _, err := NewFanout(FanoutConfig{URL: "http://x", Node: "a"}, rec, nil, nil); err == nil {
		t.Error("bad URL accepted")
	}
	f, err := NewFanout(FanoutConfig{URL: "redis://127.0.0.1:1/0", Node: "a"}, rec, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := FanoutConfig{URL: "redis://127.0.0.1:1/0", Node: "a", Stream: "ramjet:purge", MaxLen: 100000, Queue: 10000, DrainTimeout: time.Second, GapGrace: 10 * time.Second}
	if f.cfg != want {
		t.Errorf("config %+v, want %+v", f.cfg, want)
	}
	if f.epKey != "ramjet:purge:epoch" {
		t.Errorf("epoch key %q", f.epKey)
	}
}

// BenchmarkFanoutLatency measures publish → apply on two other nodes, one
// purge at a time, and reports the p50 and p99 over both.
func BenchmarkFanoutLatency(b *testing.B) {
	r := startRedis(b)
	got := make(chan struct{}, 2)
	signal := invalidatorFunc(func(Command) Result { got <- struct{}{}; return Result{} })
	nodes := make([]*node, 3)
	for i := range nodes {
		nodes[i] = unstartedNode(b, r.URL, string(rune('A'+i)), signal, nil)
		if err := nodes[i].Start(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	waitConnected(b, nodes...)
	lat := make([]time.Duration, 0, 2*b.N)
	cmd := tagCmd("bench")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		nodes[0].Publish(cmd)
		for range 2 {
			select {
			case <-got:
				lat = append(lat, time.Since(start))
			case <-time.After(wait):
				b.Fatal("purge not applied")
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

// BenchmarkFanoutThroughput publishes b.N purges from one node as fast as
// Publish takes them and reports the purges applied per second on each of
// the two others.
func BenchmarkFanoutThroughput(b *testing.B) {
	r := startRedis(b)
	cfg := func(c *FanoutConfig) {
		c.Queue = b.N + 1
		c.MaxLen = int64(2*b.N + 100000)
	}
	var done sync.WaitGroup
	counts := make([]atomic.Int64, 3)
	nodes := make([]*node, 3)
	for i := range nodes {
		count := invalidatorFunc(func(Command) Result {
			if counts[i].Add(1) == int64(b.N) {
				done.Done()
			}
			return Result{}
		})
		nodes[i] = unstartedNode(b, r.URL, string(rune('A'+i)), count, cfg)
		if err := nodes[i].Start(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	done.Add(2) // B and C; A applies nothing
	waitConnected(b, nodes...)
	cmd := tagCmd("bench")
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		nodes[0].Publish(cmd)
	}
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(time.Minute):
		b.Fatalf("applied %d and %d of %d", counts[1].Load(), counts[2].Load(), b.N)
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "purges/s/node")
	for _, n := range nodes {
		if f := n.metric(b, "ramjet_purge_fanout_flushes_total"); f != 0 {
			b.Fatalf("%s flushed: the benchmark measured a gap", n.cfg.Node)
		}
	}
}

type invalidatorFunc func(Command) Result

func (f invalidatorFunc) Purge(c Command) Result { return f(c) }

// testLogger sends the fan-out's log to the test's when -v.
func testLogger(t testing.TB) *slog.Logger {
	if !testing.Verbose() {
		return nil
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// A node that may have missed purges keeps serving what it holds, stale,
// for its grace: the command it applies says so.
func TestFanoutGapMarksEverythingStaleForTheGrace(t *testing.T) {
	a := lateNode(t, func(c *FanoutConfig) { c.GapGrace = 3 * time.Second })
	cmd := a.rec.all()[0]
	if !cmd.Gap || cmd.Grace != 3*time.Second || !cmd.Targets[0].Soft {
		t.Errorf("gap applied as %+v, want a soft gap command with a 3s grace", cmd)
	}
	if got := a.metric(t, `ramjet_purge_fanout_gaps_total{reason="late_start"}`); got != 1 {
		t.Errorf("late_start gaps = %v, want 1", got)
	}
	if got := a.metric(t, "ramjet_purge_fanout_flushes_total"); got != 0 {
		t.Errorf("flushes = %v, want 0 under the stale policy", got)
	}
}

// lateNode starts node A while Redis is unreachable (three refused
// dials: its placement failed), lets Redis through, and returns once A
// applied what it applies for the purges it may have missed.
func lateNode(t *testing.T, tweak func(*FanoutConfig)) *node {
	t.Helper()
	r := startRedis(t)
	link := startCut(t, r.Addr)
	link.Cut()
	a := newNode(t, link.URL(), "A", tweak)
	testbed.WaitFor(t, wait, "A refused", func() bool { return link.refused.Load() >= 3 })
	link.Mend()
	a.rec.waitFor(t, "A's gap", has("ALL"))
	return a
}

// purge.gap: flush keeps the hard flush of before.
func TestFanoutGapFlushPolicyEmptiesTheCache(t *testing.T) {
	a := lateNode(t, func(c *FanoutConfig) { c.Gap = GapFlush })
	if cmd := a.rec.all()[0]; cmd.Gap || cmd.Targets[0].Soft {
		t.Errorf("flush applied as %+v, want a hard purge of everything", cmd)
	}
	if got := a.metric(t, "ramjet_purge_fanout_flushes_total"); got != 1 {
		t.Errorf("flushes = %v, want 1", got)
	}
}

// Purges another node dropped arrive as a gap, applied by this node's own
// policy.
func TestFanoutDroppedPurgesArriveAsTheReceiversGap(t *testing.T) {
	r := startRedis(t)
	link := startCut(t, r.Addr)
	a := newNode(t, link.URL(), "A", func(c *FanoutConfig) { c.Queue = 10 })
	b := newNode(t, r.URL, "B", func(c *FanoutConfig) { c.Gap = GapFlush })
	c := newNode(t, r.URL, "C", func(c *FanoutConfig) { c.GapGrace = time.Minute })
	waitConnected(t, a, b, c)
	link.Cut()
	for i := range 20 {
		a.Publish(tagCmd("d" + strconv.Itoa(i)))
	}
	link.Mend()
	b.rec.waitFor(t, "ALL on B", has("ALL"))
	c.rec.waitFor(t, "ALL on C", has("ALL"))
	for _, cmd := range b.rec.all() {
		if cmd.Targets[0].Kind == KindAll && (cmd.Gap || cmd.Targets[0].Soft) {
			t.Errorf("B (flush policy) applied %+v", cmd)
		}
	}
	for _, cmd := range c.rec.all() {
		if cmd.Targets[0].Kind == KindAll && (!cmd.Gap || cmd.Grace != time.Minute) {
			t.Errorf("C (stale policy, 1m) applied %+v", cmd)
		}
	}
}

// A Redis that keeps its data (appendonly) brings the stream and the
// epoch key back after a restart: the nodes carry on from their last
// entry, with no gap, and purges published while it was down arrive.
func TestFanoutRedisRestartWithPersistenceIsNoGap(t *testing.T) {
	quietRedis.Do(func() { redis.SetLogger(RedisLogger{Log: slog.New(slog.DiscardHandler)}) })
	r := testbed.StartPersistentRedis(t)
	a := newNode(t, r.URL, "A", nil)
	b := newNode(t, r.URL, "B", nil)
	waitConnected(t, a, b)
	a.Publish(tagCmd("before"))
	b.rec.waitFor(t, "before on B", has("before"))

	r.Restart(t)
	a.Publish(tagCmd("after"))
	b.rec.waitFor(t, "after on B", has("after"))
	for _, n := range []*node{a, b} {
		if got := n.gaps(t); got != 0 {
			t.Errorf("%s counted %v gaps across a restart of a persistent Redis", n.cfg.Node, got)
		}
	}
	if slices.Contains(tags(b.rec.all()), "ALL") {
		t.Errorf("B applied %v: a gap", tags(b.rec.all()))
	}
}

// Purges that reach a restarted, empty Redis are in its new stream: a
// node that notices the new instance reads that stream from its start
// and applies them exactly, besides the gap for what was lost.
func TestFanoutPurgesInARestartedRedisApplyExactly(t *testing.T) {
	r := startRedis(t)
	a := newNode(t, r.URL, "A", nil)
	b := newNode(t, r.URL, "B", nil)
	waitConnected(t, a, b)
	r.Kill()
	a.Publish(tagCmd("x"))
	r.Restart(t)
	b.rec.waitFor(t, "x and the gap on B", hasAll("x", "ALL"))
	if got := b.metric(t, `ramjet_purge_fanout_gaps_total{reason="epoch"}`); got != 1 {
		t.Errorf("B counted %v epoch gaps, want 1", got)
	}
}

// Behind Redis Sentinel, a failover promotes the replica, which has the
// stream and the epoch key: the nodes follow it and carry on with no gap.
func TestFanoutFollowsASentinelFailoverWithoutAGap(t *testing.T) {
	quietRedis.Do(func() { redis.SetLogger(RedisLogger{Log: slog.New(slog.DiscardHandler)}) })
	s := testbed.StartSentinel(t)
	a := newNode(t, s.URL, "A", nil)
	b := newNode(t, s.URL, "B", nil)
	waitConnected(t, a, b)
	a.Publish(tagCmd("before"))
	b.rec.waitFor(t, "before on B", has("before"))
	// The replica has everything before the master dies: what asynchronous
	// replication may lose is a gap, tested elsewhere.
	if got := s.Master.Do(t, "WAIT", "1", "2000"); got != "1" {
		t.Fatalf("WAIT for the replica = %q, want 1", got)
	}

	s.Failover(t)
	a.Publish(tagCmd("after"))
	b.rec.waitFor(t, "after on B", has("after"))
	for _, n := range []*node{a, b} {
		if got := n.gaps(t); got != 0 {
			t.Errorf("%s counted %v gaps across a Sentinel failover", n.cfg.Node, got)
		}
	}
}
