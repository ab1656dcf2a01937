package purge

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/redis/go-redis/v9"
)

const (
	keyOld = "old-key-0123456789abcdef"
	keyNew = "new-key-0123456789abcdef"
)

// keyed makes a node with keys.
func keyed(t testing.TB, url, name string, keys ...string) *node {
	t.Helper()
	n := unstartedNode(t, url, name, nil, nil)
	n.SetKeys(keys)
	if err := n.Start(context.Background()); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	return n
}

// forge adds an entry the way a writer without the keys could: a
// purge-everything claiming to come from node, signed with key ("" none).
func forge(t testing.TB, c *redis.Client, node, key string) {
	t.Helper()
	body, err := json.Marshal(flushAll())
	if err != nil {
		t.Fatal(err)
	}
	ts := "1"
	values := []any{"node", node, "cmd", body, "ts", ts}
	if key != "" {
		values = append(values, macField, hex.EncodeToString(mac([]byte(key), defaultStream, node, ts, body)))
	}
	if err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: defaultStream, ID: "*", Values: values}).Err(); err != nil {
		t.Fatal(err)
	}
}

// Whoever can write to Redis but lacks the keys purges nothing: the
// entries are ignored and counted, and no node flushes because of them.
func TestFanoutIgnoresEntriesNoKeyVerifies(t *testing.T) {
	r := startRedis(t)
	a := keyed(t, r.URL, "A", keyOld)
	b := keyed(t, r.URL, "B", keyOld)
	waitConnected(t, a, b)
	raw := rawClient(t, r.URL)
	forge(t, raw, "X", "")                // unsigned
	forge(t, raw, "A", "")                // unsigned, posing as a node
	forge(t, raw, "X", "guessed-key-000") // signed with another key
	forge(t, raw, "B", "")                // posing as B itself
	a.Publish(tagCmd("after"))
	b.rec.waitFor(t, "after on B", has("after"))
	a.Publish(tagCmd("fence"))
	b.rec.waitFor(t, "fence on B", has("fence"))
	if got := tags(b.rec.all()); !slices.Equal(got, []string{"after", "fence"}) {
		t.Errorf("B applied %v, want only A's signed purges [after fence]", got)
	}
	if got := b.metric(t, "ramjet_purge_fanout_unverified_total"); got != 4 {
		t.Errorf("B counted %v unverified entries, want 4", got)
	}
	for _, n := range []*node{a, b} {
		if got := n.metric(t, "ramjet_purge_fanout_flushes_total"); got != 0 {
			t.Errorf("%s flushed %v times because of forged entries", n.cfg.Node, got)
		}
	}
}

// Keys rotate without a lost purge: the new key is added second on every
// node, then moved first, then the old one dropped, one node at a time.
func TestFanoutKeyRotationLosesNoPurge(t *testing.T) {
	r := startRedis(t)
	a := keyed(t, r.URL, "A", keyOld)
	b := keyed(t, r.URL, "B", keyOld)
	waitConnected(t, a, b)
	steps := []struct {
		node *node
		keys []string
	}{
		{a, []string{keyOld, keyNew}},
		{b, []string{keyOld, keyNew}},
		{a, []string{keyNew, keyOld}}, // A signs with the new key, B still signs with the old
		{b, []string{keyNew, keyOld}},
		{a, []string{keyNew}},
		{b, []string{keyNew}},
	}
	for i, st := range steps {
		st.node.SetKeys(st.keys)
		tag := "step" + strconv.Itoa(i)
		a.Publish(tagCmd(tag + "-a"))
		b.Publish(tagCmd(tag + "-b"))
		b.rec.waitFor(t, tag+"-a on B", has(tag+"-a"))
		a.rec.waitFor(t, tag+"-b on A", has(tag+"-b"))
	}
	for _, n := range []*node{a, b} {
		if got := n.metric(t, "ramjet_purge_fanout_unverified_total"); got != 0 {
			t.Errorf("%s ignored %v entries during the rotation", n.cfg.Node, got)
		}
	}
}

// Without keys entries are neither signed nor checked, as before keys
// existed.
func TestFanoutWithoutKeysAppliesUnsignedEntries(t *testing.T) {
	r := startRedis(t)
	b := newNode(t, r.URL, "B", nil)
	waitConnected(t, b)
	forge(t, rawClient(t, r.URL), "X", "")
	b.rec.waitFor(t, "the unsigned purge on B", has("ALL"))
}

// verify accepts exactly the entries signed with one of the keys over
// exactly their fields.
func FuzzVerify(f *testing.F) {
	f.Add("A", "123", `{"targets":[{"kind":6}]}`, "", false)
	f.Add("A", "123", `{}`, "zz", true)
	f.Add("", "", "", "00", true)
	f.Fuzz(func(t *testing.T, node, ts, cmd, macHex string, sign bool) {
		fo := &Fanout{cfg: FanoutConfig{Stream: defaultStream}}
		fo.SetKeys([]string{keyNew, keyOld})
		if sign {
			macHex = hex.EncodeToString(mac([]byte(keyOld), defaultStream, node, ts, []byte(cmd)))
		}
		msg := redis.XMessage{ID: "1-0", Values: map[string]any{"node": node, "ts": ts, "cmd": cmd, macField: macHex}}
		if err := fo.verify(msg); (err == nil) != sign {
			t.Fatalf("verify(%q) = %v with sign %v", msg.Values, err, sign)
		}
		if sign { // the same signature over other fields fails
			msg.Values["node"] = node + "x"
			if fo.verify(msg) == nil {
				t.Fatal("a signature verified another node's entry")
			}
		}
	})
}

// A copy of a signed entry (added again by whoever can write to the
// stream) is skipped and counted: a copied purge of everything does not
// flush the nodes again.
func TestFanoutSkipsCopiesOfSignedEntries(t *testing.T) {
	r := startRedis(t)
	a := keyed(t, r.URL, "A", keyOld)
	b := keyed(t, r.URL, "B", keyOld)
	waitConnected(t, a, b)
	a.Publish(flushAll())
	b.rec.waitFor(t, "the flush on B", has("ALL"))
	raw := rawClient(t, r.URL)
	last, err := raw.XRevRangeN(context.Background(), defaultStream, "+", "-", 1).Result()
	if err != nil || len(last) != 1 {
		t.Fatalf("xrevrange: %v %v", last, err)
	}
	for range 3 {
		if err := raw.XAdd(context.Background(), &redis.XAddArgs{Stream: defaultStream, ID: "*", Values: last[0].Values}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	a.Publish(tagCmd("fence"))
	b.rec.waitFor(t, "fence on B", has("fence"))
	if got := tags(b.rec.all()); !slices.Equal(got, []string{"ALL", "fence"}) {
		t.Errorf("B applied %v, want [ALL fence]: the copies skipped", got)
	}
	// B has read past the copies (it applied the fence); A skips its own
	// fence, so its count is waited for: it reads the stream on its own.
	for _, n := range []*node{a, b} {
		testbed.WaitFor(t, 10*time.Second, n.cfg.Node+"'s count of the copies", func() bool {
			return n.metric(t, "ramjet_purge_fanout_copies_total") >= 3
		})
		if got := n.metric(t, "ramjet_purge_fanout_copies_total"); got != 3 {
			t.Errorf("%s counted %v copies, want 3", n.cfg.Node, got)
		}
	}
}

// The memory of signatures is bounded: the oldest goes first.
func TestRecentSigsForgetsTheOldest(t *testing.T) {
	var r recentSigs
	for i := range recentEntries + 1 {
		var s sig
		binary.BigEndian.PutUint32(s[:], uint32(i))
		if !r.add(s) {
			t.Fatalf("signature %d taken for a copy", i)
		}
	}
	var first, third sig // 0 is forgotten; taking it again forgets 1, not 2
	binary.BigEndian.PutUint32(third[:], 2)
	if !r.add(first) {
		t.Error("the oldest signature is still remembered past the bound")
	}
	if r.add(third) {
		t.Error("a recent signature was forgotten")
	}
	if len(r.set) != recentEntries {
		t.Errorf("%d signatures remembered, want %d", len(r.set), recentEntries)
	}
}
