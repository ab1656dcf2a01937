package rawsock

import (
	"io"
	"testing"
	"time"
)

func TestReadNowTakesWhatIsThereWhateverTheDeadlineAndNeverWaits(t *testing.T) {
	client, server := tcpPair(t)
	s, ok := New(server)
	if !ok {
		t.Fatal("a TCP connection has a descriptor")
	}
	if err := server.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := s.ReadNow(buf); n != 0 || err != nil {
		t.Fatalf("ReadNow with nothing sent = %d, %v; want 0, nil", n, err)
	}
	if _, err := client.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	var got []byte
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < 2 && time.Now().Before(deadline) {
		n, err := s.ReadNow(buf)
		if err != nil {
			t.Fatalf("ReadNow: %v", err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "ab" {
		t.Fatalf("ReadNow read %q, want %q", got, "ab")
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(deadline) {
		n, err := s.ReadNow(buf)
		if err == io.EOF {
			return
		}
		if n != 0 || err != nil {
			t.Fatalf("ReadNow after the peer closed = %d, %v", n, err)
		}
	}
	t.Fatal("ReadNow never saw the peer's close")
}
