package disk

import (
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// coldRecorder is a connection with sendfile that records how each body
// was sent; short sends half of it (the file ends early), and during
// runs once while a send is under way.
type coldRecorder struct {
	cold   []bool
	short  bool
	during func()
}

func (r *coldRecorder) SendFile(_ int, _, n int64, cold bool) (int64, error) {
	r.cold = append(r.cold, cold)
	if f := r.during; f != nil {
		r.during = nil
		f()
	}
	if r.short {
		return n / 2, nil
	}
	return n, nil
}

// clocked opens the tier in dir, its keys on disk only, on a cache whose
// clock is now.
func clocked(t *testing.T, dir string, now *atomic.Int64) node {
	t.Helper()
	c, err := cache.New(cache.Config{Size: 64 << 20, Clock: now.Load})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	tier, err := Open(Config{Path: dir, Size: 64 << 20, RAM: 1}, c)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return node{c, tier}
}

// A file is sent with the raw sendfile (warm) only while a body of it was
// sent whole within the last rechecks: its first send after it is opened,
// the sends lent it before that one ended, any after it sat idle, and
// those after a send that broke off go as cold files, with an ordinary
// system call the scheduler sees. Nothing but the lend's own clock read
// is involved: the fake clock is the only time.
func TestFileIsSentColdUntilSentWholeAndAgainOnceItSatIdle(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1")
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	b := clocked(t, dir, &now)
	conn := &coldRecorder{}
	lent := func() *cache.Section {
		t.Helper()
		o := lend(b, "http://s/1")
		if o == nil {
			t.Fatal("not lent")
		}
		f := o.Variants[0].File
		return f.Open(f.Body, conn)
	}
	send := func(s *cache.Section) {
		t.Helper()
		_, _ = s.WriteTo(io.Discard) // a short send's error is the point of one step
		s.Close()
	}
	steps := []struct {
		what    string
		advance time.Duration
		short   bool
		cold    bool
	}{
		{what: "the first send of a file just opened", cold: true},
		{what: "the next, right after it", cold: false},
		{what: "0.9 s later", advance: 900 * time.Millisecond, cold: false},
		{what: "0.6 s later, past a recheck", advance: 600 * time.Millisecond, cold: false},
		{what: "2.5 s later", advance: 2500 * time.Millisecond, cold: true},
		{what: "after 10 s idle", advance: 10 * time.Second, cold: true},
		{what: "right after that send", cold: false},
		{what: "after 10 s idle, broken off", advance: 10 * time.Second, short: true, cold: true},
		{what: "after a send that broke off", cold: true},
		{what: "after it ended whole", cold: false},
	}
	for _, s := range steps {
		now.Add(int64(s.advance))
		conn.short = s.short
		send(lent())
		if got := conn.cold[len(conn.cold)-1]; got != s.cold {
			t.Fatalf("%s: sent as cold %v, want %v", s.what, got, s.cold)
		}
	}

	// Sent while the first send after an idle spell is under way (its
	// pages coming back): cold too.
	now.Add(int64(10 * time.Second))
	conn.during = func() { send(lent()) }
	send(lent())
	if got := conn.cold[len(conn.cold)-2:]; !got[0] || !got[1] {
		t.Fatalf("a send that began while the first after 10 s idle was under way: cold %v, want both cold", got)
	}
}
