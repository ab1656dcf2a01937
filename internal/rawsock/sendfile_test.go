package rawsock

import (
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// fileOf is a temporary file holding b (its own offset at the end:
// sendfile sends from the offset it is given).
func fileOf(t *testing.T, b []byte) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "sendfile")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	return f
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

// More than the socket buffers take: the head's send and the sendfiles
// return short and wait for the slow reader, and the peer still reads
// the head, then the file's bytes from the offset asked: from a warm
// file (raw sendfile) as from a cold one (an ordinary system call).
func TestSendFileSendsTheHeadThenTheFileThroughPartialSends(t *testing.T) {
	for _, cold := range []bool{false, true} {
		t.Run(fmt.Sprintf("cold=%v", cold), func(t *testing.T) { sendThroughPartialSends(t, cold) })
	}
}

func sendThroughPartialSends(t *testing.T, cold bool) {
	client, server := tcpPair(t)
	// Small buffers (the kernel's autotuning would queue megabytes).
	if err := server.(*net.TCPConn).SetWriteBuffer(16 << 10); err != nil {
		t.Fatal(err)
	}
	if err := client.(*net.TCPConn).SetReadBuffer(32 << 10); err != nil {
		t.Fatal(err)
	}
	s, _ := New(server)
	data := pattern(1 << 20)
	f := fileOf(t, data)
	head := pattern(100 << 10) // a head larger than the send buffer: sendto returns short too
	const off, n = 12345, 400 << 10
	want := append(append([]byte{}, head...), data[off:off+n]...)
	if err := client.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err) // a byte lost or sent twice leaves the reader waiting
	}
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, 0, len(want))
		buf := make([]byte, 1000) // small reads: the sender waits again and again
		for len(b) < len(want) {
			k, err := client.Read(buf)
			if err != nil {
				break
			}
			b = append(b, buf[:k]...)
		}
		got <- b
	}()
	sent, err := s.SendFile(head, int(f.Fd()), off, n, cold)
	if err != nil || sent != n {
		t.Fatalf("SendFile = %d, %v; want %d", sent, err, n)
	}
	if b := <-got; string(b) != string(want) {
		t.Fatalf("the peer read %d bytes, not the head followed by the file from %d", len(b), off)
	}
	if pos, _ := f.Seek(0, io.SeekCurrent); pos != int64(len(data)) {
		t.Fatalf("the descriptor's offset moved to %d", pos)
	}
}

func TestSendFileOfATruncatedFileSendsWhatItHas(t *testing.T) {
	client, server := tcpPair(t)
	s, _ := New(server)
	f := fileOf(t, pattern(5000))
	go io.Copy(io.Discard, client) //nolint:errcheck // drains until the test ends
	if sent, err := s.SendFile([]byte("head"), int(f.Fd()), 1000, 30000, true); err != nil || sent != 4000 {
		t.Fatalf("SendFile = %d, %v; want the 4000 bytes there are", sent, err)
	}
	// The socket writes on after it.
	if _, err := s.Write([]byte("next")); err != nil {
		t.Fatal(err)
	}
}

func TestSendFileOfNothingWritesTheHead(t *testing.T) {
	client, server := tcpPair(t)
	s, _ := New(server)
	f := fileOf(t, pattern(10))
	if sent, err := s.SendFile([]byte("head"), int(f.Fd()), 0, 0, false); err != nil || sent != 0 {
		t.Fatalf("SendFile = %d, %v", sent, err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(client, buf); err != nil || string(buf) != "head" {
		t.Fatalf("the peer read %q, %v", buf, err)
	}
}

func TestSendFileToAClosedPeerFails(t *testing.T) {
	client, server := tcpPair(t)
	s, _ := New(server)
	f := fileOf(t, pattern(1<<20))
	client.Close()
	var err error
	for range 100 { // the first sends may land before the peer's reset
		if _, err = s.SendFile([]byte("head"), int(f.Fd()), 0, 1<<20, false); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("sendfile to a closed peer never failed")
	}
}

func TestSendFileAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	client, server := tcpPair(t)
	s, _ := New(server)
	f := fileOf(t, pattern(30<<10))
	head, buf := []byte("head"), make([]byte, 64<<10)
	cold := false
	allocs := testing.AllocsPerRun(100, func() {
		cold = !cold // a cold file's ordinary sendfile too
		if _, err := s.SendFile(head, int(f.Fd()), 0, 30<<10, cold); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(client, buf[:len(head)+30<<10]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a head and a sendfile allocate %.1f times, want 0", allocs)
	}
}
