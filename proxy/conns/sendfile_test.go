package conns

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// fileOf is a file holding b, open for reading.
func fileOf(t *testing.T, b []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The head written after WriteFile is held and leaves just before the
// file's bytes, which are sent from the offset asked, not the
// descriptor's (other answers share it); the second round as a cold
// file's (an ordinary sendfile).
func TestSendFileSendsTheHeldHeadThenTheFileFromItsOwnOffset(t *testing.T) {
	c, client := tcpConn(t)
	data := pattern(200 << 10)
	f := fileOf(t, data)
	head := []byte("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
	for round, off := range []int64{1000, 50} {
		c.WriteFile()
		if _, err := c.Write(head); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(head)+100000)
		done := make(chan error, 1)
		go func() { _, err := io.ReadFull(client, got); done <- err }()
		n, err := c.SendFile(int(f.Fd()), off, 100000, round == 1)
		if err != nil || n != 100000 {
			t.Fatalf("round %d: sent %d, %v", round, n, err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if string(got[:len(head)]) != string(head) || string(got[len(head):]) != string(data[off:off+100000]) {
			t.Fatalf("round %d: not the head then the file's bytes from %d", round, off)
		}
	}
	if pos, _ := f.Seek(0, io.SeekCurrent); pos != 0 {
		t.Fatalf("the descriptor's offset moved to %d", pos)
	}
}

// A file shorter than asked sends what it has and says so: the server
// then closes the connection rather than answer short.
func TestSendFileOfATruncatedFileSendsShort(t *testing.T) {
	c, client := tcpConn(t)
	f := fileOf(t, pattern(5000))
	go io.Copy(io.Discard, client) //nolint:errcheck // drains until the test ends
	n, err := c.SendFile(int(f.Fd()), 0, 30000, false)
	if err != nil || n != 5000 {
		t.Fatalf("sent %d, %v; want the 5000 bytes there are", n, err)
	}
}

func TestSendFileOnAConnectionWithoutARawSocketIsUnsupported(t *testing.T) {
	c, _ := tcpConn(t)
	c.dropSock() // as a connection under a PROXY header's wrapper has none
	f := fileOf(t, pattern(100))
	if n, err := c.SendFile(int(f.Fd()), 0, 100, false); n != 0 || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("sent %d, %v; want nothing and ErrUnsupported", n, err)
	}
}
