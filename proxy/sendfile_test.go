package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// lendingTier is a lower tier that lends one page from a file (as the disk
// tier does), and fetches it into RAM with the body "from RAM".
type lendingTier struct {
	c       *cache.Cache
	path    string
	body    cache.Span
	fresh   bool
	between func(path string)       // runs between the lend and the send
	lent    atomic.Pointer[os.File] // set by the server's goroutine
	fetched atomic.Int32
	asked   atomic.Int32 // requests to the origin
}

func (l *lendingTier) Stored(uint64, *cache.Object, uint64) {}
func (l *lendingTier) Purged(cache.Purge)                   {}
func (l *lendingTier) Seq() uint64                          { return 0 }

func (l *lendingTier) entry() *cache.Entry {
	now := time.Now().UnixNano()
	e := &cache.Entry{Status: http.StatusOK, ContentType: []byte("text/plain"), Stored: now, StaleUntil: now + int64(time.Hour)}
	if l.fresh {
		e.FreshUntil = now + int64(time.Hour)
	}
	return e
}

func (l *lendingTier) Lend(key []byte) *cache.Object {
	f, err := os.Open(l.path)
	if err != nil {
		return nil
	}
	l.lent.Store(f)
	e := l.entry()
	e.File = &cache.BodyFile{File: f, FD: int(f.Fd()), Body: l.body}
	if l.between != nil {
		l.between(l.path)
	}
	return &cache.Object{Key: string(key), Variants: []*cache.Entry{e}}
}

func (l *lendingTier) Fetch(h uint64, key []byte) *cache.Object {
	l.fetched.Add(1)
	e := l.entry()
	e.Body = []byte("from RAM")
	return l.c.Promote(h, string(key), cache.VarySpec{}, e)
}

// lendingProxy serves a proxy over a cache whose lower tier is l, with a
// body of n bytes at offset 100 of l's file.
func lendingProxy(t *testing.T, l *lendingTier, n int) (string, string) {
	t.Helper()
	body := strings.Repeat("0123456789", n/10)
	l.path = filepath.Join(t.TempDir(), "page")
	if err := os.WriteFile(l.path, []byte(strings.Repeat("h", 100)+body+"tail"), 0o600); err != nil {
		t.Fatal(err)
	}
	l.body = cache.Span{Off: 100, Len: int64(len(body))}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		l.asked.Add(1) // a stale copy's refresh
		w.Header().Set("Cache-Control", "no-store")
	}))
	t.Cleanup(origin.Close)
	c, err := cache.New(cache.Config{Size: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	l.c = c
	c.SetLower(l)
	p, err := New(testConfig(origin.URL), Stores{Public: c}, discardLog)
	if err != nil {
		t.Fatal(err)
	}
	p.Start(context.Background())
	t.Cleanup(func() {
		p.Close()
		c.Close()
	})
	return serveProxy(t, p), body
}

func TestFreshHitFromDiskIsSentFromTheFile(t *testing.T) {
	l := &lendingTier{fresh: true}
	url, body := lendingProxy(t, l, 30000)
	resp, err := http.Get(url + "/page")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(got) != body || resp.ContentLength != int64(len(body)) {
		t.Fatalf("%d bytes (Content-Length %d, err %v), want the file's %d at its offset", len(got), resp.ContentLength, err, len(body))
	}
	if cs := resp.Header.Get("Cache-Status"); !strings.Contains(cs, "hit") || l.fetched.Load() != 0 || l.asked.Load() != 0 {
		t.Fatalf("Cache-Status %q, %d fetches, %d to the origin: want a hit sent from the lent file", cs, l.fetched.Load(), l.asked.Load())
	}
	// fasthttp closes the file once the last byte went out: maybe just
	// after the client read it.
	if !testbed.Poll(5*time.Second, func() bool { _, err := l.lent.Load().Stat(); return errors.Is(err, os.ErrClosed) }) {
		t.Error("the lent file is still open after the answer")
	}
}

// A lent copy that is not a fresh hit (here stale: a refresh would keep
// it) is fetched into RAM as before, and its file closed.
func TestStaleCopyFromDiskIsFetchedIntoRAM(t *testing.T) {
	l := &lendingTier{}
	url, _ := lendingProxy(t, l, 30000)
	resp, err := http.Get(url + "/page")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "from RAM" || l.fetched.Load() != 1 {
		t.Fatalf("body %.40q after %d fetches, want the copy fetched into RAM", got, l.fetched.Load())
	}
	if _, err := l.lent.Load().Stat(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the file of the copy not sent is still open (Stat: %v)", err)
	}
}

// A file truncated between the lookup and the send sends short: the
// connection is closed, never a full Content-Length with fewer bytes.
func TestFileTruncatedBeforeItIsSentClosesTheConnection(t *testing.T) {
	l := &lendingTier{fresh: true, between: func(path string) {
		if err := os.Truncate(path, 5000); err != nil {
			t.Error(err)
		}
	}}
	url, body := lendingProxy(t, l, 30000)
	resp, err := http.Get(url + "/page")
	if err != nil {
		return // closed before the head: nothing served
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || string(got) == body {
		t.Fatalf("%d of %d bytes read without an error: a truncated page served as whole", len(got), len(body))
	}
}
