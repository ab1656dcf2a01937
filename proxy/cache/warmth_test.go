package cache

import (
	"io"
	"testing"
)

// warmOwner is a lend's owner that says the file is warm or not and
// counts the whole sends it is told of.
type warmOwner struct {
	countedRelease
	warm bool
	sent int
}

func (w *warmOwner) Warm() bool { return w.warm }
func (w *warmOwner) Sent()      { w.sent++ }

// coldFlag is a connection with sendfile that records how it was asked to
// send; it sends n/2 when short.
type coldFlag struct {
	cold  []bool
	short bool
}

func (c *coldFlag) SendFile(_ int, _, n int64, cold bool) (int64, error) {
	c.cold = append(c.cold, cold)
	if c.short {
		return n / 2, nil
	}
	return n, nil
}

// The owner's warmth picks the sendfile (raw for a warm file, ordinary
// for a cold one); an owner that cannot tell sends it as cold; only a
// body sent whole tells the owner it was sent.
func TestSectionSendsAsTheOwnerJudgesItsFileAndReportsOnlyWholeSends(t *testing.T) {
	b, _ := lentFile(t, "head0123456789tail")
	conn := &coldFlag{}
	send := func() error {
		s := b.Open(Span{Off: 4, Len: 10}, conn)
		defer s.Close()
		_, err := s.WriteTo(io.Discard)
		return err
	}
	if err := send(); err != nil || !conn.cold[0] {
		t.Fatalf("an owner without warmth: %v, sent as cold %v; want cold", err, conn.cold[0])
	}
	owner := &warmOwner{}
	b.Owner = owner
	for _, warm := range []bool{false, true} {
		owner.warm = warm
		if err := send(); err != nil {
			t.Fatal(err)
		}
		if got := conn.cold[len(conn.cold)-1]; got == warm {
			t.Fatalf("the owner says warm %v: sent as cold %v", warm, got)
		}
	}
	if owner.sent != 2 {
		t.Fatalf("the owner was told of %d whole sends, want 2", owner.sent)
	}
	conn.short = true
	if err := send(); err == nil || owner.sent != 2 {
		t.Fatalf("a send that broke off: %v, the owner told of %d whole sends; want an error and still 2", err, owner.sent)
	}
}
