package disk

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// noSender is a connection with sendfile; opening a section on it is
// what an answer sending a lent body does.
type noSender struct{}

func (noSender) SendFile(int, int64, int64, bool) (int64, error) { return 0, nil }

// A lent copy is a hit once, and only when it answers (a 304 too); its
// body counts as sent only when sendfile sends it. A lend refused (the
// answer fetched the copy instead) counts neither: the fetch is the hit.
func TestLentCopyCountsOneHitWhenItAnswersAndSentOnlyWhenSendfileSendsIt(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1")
	b := checked(t, dir, true)
	want := func(step string, hits, sent uint64) {
		t.Helper()
		if s := b.t.Snapshot(); s.Hits != hits || s.Sent != sent {
			t.Fatalf("%s: hits %d, sent %d; want %d, %d", step, s.Hits, s.Sent, hits, sent)
		}
	}
	refused := lentOnce(t, b, "http://s/1") // given back unanswered: a stale copy, say
	if refused == nil {
		t.Fatal("not lent")
	}
	want("a lend refused", 0, 0)
	if fetch(b, "http://s/1", "") == nil {
		t.Fatal("not fetched")
	}
	want("the fetch after it", 1, 0)

	o := lend(b, "http://s/1")
	o.Variants[0].File.Answered() // answered with a 304: no body
	o.Variants[0].File.Close()
	want("a 304 from a lent copy", 2, 0)

	o = lend(b, "http://s/1")
	f := o.Variants[0].File
	f.Answered()
	f.Open(f.Body, noSender{}).Close()
	want("a body sent with sendfile", 3, 1)

	o = lend(b, "http://s/1")
	f = o.Variants[0].File
	f.Answered()
	f.Open(f.Body, nil).Close() // copied: no sendfile on this connection
	want("a body copied from the file", 4, 1)
}

// ramjet_disk_open_files is each tier's own: per-tier series add up to
// the process's open files rather than each repeating the total.
func TestOpenFilesSeriesIsEachTiersOwn(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	onDiskOnly(t, dirA, "http://a/1", "http://a/2")
	onDiskOnly(t, dirB, "http://b/1")
	a, b := checked(t, dirA, true), checked(t, dirB, true)
	for _, k := range []string{"http://a/1", "http://a/2"} {
		if lentOnce(t, a, k) == nil {
			t.Fatal("not lent")
		}
	}
	if lentOnce(t, b, "http://b/1") == nil {
		t.Fatal("not lent")
	}
	if got := gauge(t, a.t, "ramjet_disk_open_files"); got != 2 {
		t.Errorf("tier a: ramjet_disk_open_files %v, want its 2", got)
	}
	if got := gauge(t, b.t, "ramjet_disk_open_files"); got != 1 {
		t.Errorf("tier b: ramjet_disk_open_files %v, want its 1", got)
	}
}

// gauge is the value of the tier's series name.
func gauge(t *testing.T, tier *Tier, name string) float64 {
	t.Helper()
	set := metrics.NewSet()
	tier.Register(set)
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	for line := range strings.Lines(buf.String()) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s in\n%s", name, buf.String())
	return 0
}

// A file replaced under its name (another process sharing the directory
// renamed its copy over it) and read whole since is the one lent: never
// the descriptor kept from the file before it, even before its recheck.
func TestFileReplacedAndCheckedAgainIsLentNotTheDescriptorKeptBeforeIt(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	onDiskOnly(t, dir, "http://s/1")
	b := open(t, dir, 64<<20, Config{RAM: 1, Recheck: time.Hour}, true)
	if lentOnce(t, b, "http://s/1") == nil {
		t.Fatal("not lent")
	}
	// The same key, a body of the same length: only the file's identity
	// tells the copies apart.
	o := start(t, other, Config{})
	store(o, "http://s/1", cache.VarySpec{}, entry("", "BODY OF http://s/1", "s\x00http://s/1", "s\x02"))
	o.stop(t)
	path := pathOfKey(dir, "http://s/1")
	theirs, err := os.ReadFile(pathOfKey(other, "http://s/1"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "theirs")
	if err := os.WriteFile(tmp, theirs, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if fetch(b, "http://s/1", "") == nil { // reads the new file whole: the index vouches for it now
		t.Fatal("the new file was not fetched")
	}
	lent := lend(b, "http://s/1")
	if lent == nil {
		t.Fatal("the new file, checked whole, was not lent")
	}
	defer lent.Variants[0].File.Close()
	f := lent.Variants[0].File
	if got := string(bodyOf(t, f, f.Body)); got != "BODY OF http://s/1" {
		t.Fatalf("lent %q from the descriptor kept before the file was replaced", got)
	}
}

// Past the process's bound, a tier closes its least recently lent file
// only, as nginx's open_file_cache does: the others stay open.
func TestProcessBoundClosesOnlyTheLeastRecentlyLent(t *testing.T) {
	bound := processOpenFiles
	processOpenFiles = func() int64 { return 3 }
	t.Cleanup(func() { processOpenFiles = bound })
	dir := t.TempDir()
	keys := []string{"http://s/1", "http://s/2", "http://s/3", "http://s/4"}
	onDiskOnly(t, dir, keys...)
	b := checked(t, dir, true)
	lent := map[string]*cache.Object{}
	for _, k := range append(keys[:3:3], "http://s/1") { // 2 is the least recently lent
		if lent[k] = lentOnce(t, b, k); lent[k] == nil {
			t.Fatalf("%s not lent", k)
		}
	}
	if lent["http://s/4"] = lentOnce(t, b, "http://s/4"); lent["http://s/4"] == nil {
		t.Fatal("not lent")
	}
	for _, k := range keys {
		if closed := closedFile(lent[k]); closed != (k == "http://s/2") {
			t.Errorf("%s closed: %v; want only http://s/2, the least recently lent", k, closed)
		}
	}
	if b.t.Held() != 3 {
		t.Fatalf("%d kept, want 3", b.t.Held())
	}
}

// A site's own tier registers the same series labelled with its site,
// beside the shared tier's bare ones, and names them for unregistering.
func TestSiteTiersSeriesAreLabelledWithTheSite(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	onDiskOnly(t, dirB, "http://b/1", "http://b/2")
	shared, site := checked(t, dirA, true), checked(t, dirB, true)
	set := metrics.NewSet()
	bare := shared.t.Register(set)
	names := RegisterSeries(set, `a "site"`, func() *Tier { return site.t })
	if len(names) != len(bare) {
		t.Fatalf("%d series for the site, %d for the shared tier", len(names), len(bare))
	}
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	for _, want := range []string{"ramjet_disk_objects 0\n", `ramjet_disk_objects{site="a \"site\""} 2` + "\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q in\n%s", want, buf.String())
		}
	}
	for _, name := range names {
		if !set.UnregisterMetric(name) {
			t.Errorf("%s was not registered", name)
		}
	}
}
