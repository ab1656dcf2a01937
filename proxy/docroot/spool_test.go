package docroot

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

// chunkWriter records the size of every write it gets.
type chunkWriter struct {
	bytes.Buffer
	writes int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

func TestSpoolDeliversEverythingInOrder(t *testing.T) {
	sp := newSpool()
	var want bytes.Buffer
	go func() {
		for i := range 2000 {
			line := strings.Repeat(string(rune('a'+i%26)), 1+i%300)
			want.WriteString(line)
			sp.Write([]byte(line))
		}
		sp.closeWrite(nil)
	}()
	var got chunkWriter
	n, err := (&scriptBody{head: []byte("HEAD"), sp: sp}).WriteTo(&got)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "HEAD"+want.String() || n != int64(got.Len()) {
		t.Fatalf("got %d bytes, want %d", got.Len(), 4+want.Len())
	}
	if got.writes > 2001 {
		t.Fatalf("%d writes for 2000 pieces: the spool never batched", got.writes)
	}
}

func TestSpoolWriterFailsOnceTheReaderLeaves(t *testing.T) {
	sp := newSpool()
	done := make(chan error, 1)
	go func() {
		big := make([]byte, 64<<10)
		for {
			if _, err := sp.Write(big); err != nil {
				done <- err
				return
			}
		}
	}()
	(&scriptBody{sp: sp}).Close()
	if err := <-done; !errors.Is(err, errClientGone) {
		t.Fatalf("writer error %v, want errClientGone", err)
	}
}

func TestSpoolBoundsWhatItHolds(t *testing.T) {
	sp := newSpool()
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 64 {
			sp.Write(make([]byte, 32<<10))
		}
		sp.closeWrite(nil)
	})
	var total int
	buf := make([]byte, 1000)
	for {
		sp.mu.Lock()
		held := len(sp.buf) - sp.off
		sp.mu.Unlock()
		if held > spoolMax+32<<10 {
			t.Fatalf("spool holds %d bytes, bound %d", held, spoolMax)
		}
		n, err := sp.Read(buf)
		total += n
		if err == io.EOF {
			break
		}
	}
	wg.Wait()
	if total != 64*32<<10 {
		t.Fatalf("read %d bytes", total)
	}
}

func TestSpoolPassesTheWritersError(t *testing.T) {
	sp := newSpool()
	boom := errors.New("worker died")
	sp.Write([]byte("partial"))
	sp.closeWrite(boom)
	var got bytes.Buffer
	if _, err := (&scriptBody{sp: sp}).WriteTo(&got); !errors.Is(err, boom) || got.String() != "partial" {
		t.Fatalf("err %v, body %q", err, got.String())
	}
}

func TestSpoolRecycledWhenBothSidesAreDoneStartsClean(t *testing.T) {
	sp := newSpool()
	wrote := make(chan struct{})
	go func() {
		sp.Write(bytes.Repeat([]byte("x"), 10<<10))
		sp.EndOutput()
		close(wrote)
	}()
	body := &scriptBody{sp: sp}
	if _, err := body.WriteTo(io.Discard); err != nil {
		t.Fatal(err)
	}
	body.Close()
	body.Close() // a second Close must not let go of it twice
	<-wrote
	if !errors.Is(sp.err, io.EOF) {
		t.Fatalf("err = %v: the spool was reset while its writer had not let go", sp.err)
	}
	sp.closeWrite(errors.New("late")) // the first end counts
	if !errors.Is(sp.err, io.EOF) {
		t.Fatalf("err = %v after a second end", sp.err)
	}
	sp.writerDone()
	if sp.err != nil || sp.gone != nil || sp.off != 0 || len(sp.buf) != 0 || len(sp.free) != 0 {
		t.Fatalf("recycled spool kept state: err=%v gone=%v off=%d buf=%d free=%d", sp.err, sp.gone, sp.off, len(sp.buf), len(sp.free))
	}
	if cap(sp.buf)+cap(sp.free) < 10<<10 {
		t.Fatal("recycled spool dropped its buffers")
	}
	sp.users.Store(2) // as newSpool would hand it out again
	go func() {
		sp.Write([]byte("second"))
		sp.EndOutput()
	}()
	var got bytes.Buffer
	if _, err := (&scriptBody{sp: sp}).WriteTo(&got); err != nil || got.String() != "second" {
		t.Fatalf("reused spool gave %q, %v", got.String(), err)
	}
}

func TestSpoolAbandonedBeforeItsEndStopsTheWriter(t *testing.T) {
	sp := newSpool()
	sp.Write([]byte("partial"))
	(&scriptBody{sp: sp}).Close()
	if _, err := sp.Write([]byte("more")); !errors.Is(err, errClientGone) {
		t.Fatalf("write after the reader left: %v, want errClientGone", err)
	}
}
