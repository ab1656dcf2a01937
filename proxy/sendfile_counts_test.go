package proxy

import (
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// countingOwner is a lend's owner that counts what the proxy tells it
// (cache.LendCounter), as the disk tier's metrics do.
type countingOwner struct {
	f                           *os.File
	answered, sending, released atomic.Int32
}

func (o *countingOwner) Release()  { o.released.Add(1); o.f.Close() }
func (o *countingOwner) Answered() { o.answered.Add(1) }
func (o *countingOwner) Sending()  { o.sending.Add(1) }

// countingTier is lendingTier with its lends owned by a countingOwner.
type countingTier struct {
	*lendingTier
	owner atomic.Pointer[countingOwner]
}

func (l *countingTier) Lend(key []byte) *cache.Object {
	o := l.lendingTier.Lend(key)
	if o == nil {
		return nil
	}
	c := &countingOwner{f: o.Variants[0].File.File}
	o.Variants[0].File.Owner = c
	l.owner.Store(c)
	return o
}

// A lent copy tells its lender it answered only when it is the request's
// fresh hit, and that its body is sent with sendfile only when it is: a
// stale copy, fetched into RAM instead, is neither (the tier's hit and
// sendfile counts).
func TestLentCopyTellsItsLenderOnlyWhatItsAnswerDid(t *testing.T) {
	for _, fresh := range []bool{true, false} {
		l := &countingTier{lendingTier: &lendingTier{fresh: fresh}}
		url, _ := lendingProxy(t, l.lendingTier, 30000)
		l.c.SetLower(l)
		resp, err := http.Get(url + "/page")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		o := l.owner.Load()
		if o == nil {
			t.Fatal("nothing lent")
		}
		// given back once the last byte went out: maybe just after the client read it
		if !testbed.Poll(5*time.Second, func() bool { return o.released.Load() == 1 }) {
			t.Fatalf("fresh %v: the lend was given back %d times, want 1", fresh, o.released.Load())
		}
		want := int32(0)
		if fresh {
			want = 1
		}
		if o.answered.Load() != want || o.sending.Load() != want {
			t.Errorf("fresh %v: told answered %d, sending %d; want %d and %d", fresh, o.answered.Load(), o.sending.Load(), want, want)
		}
	}
}
