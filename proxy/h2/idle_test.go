package h2

import (
	"crypto/tls"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestIdleTLSConnectionWaitsOffFasthttpsWorker: once a TLS connection
// has answered and waits for the client, its goroutine is one of its
// own, not fasthttp's worker whose stack grew for the handshake, and (on
// Linux) it waits on the socket, not inside crypto/tls's read: a stack
// the garbage collector can halve.
func TestIdleTLSConnectionWaitsOffFasthttpsWorker(t *testing.T) {
	e := startTLS(t, page725Handler, nil)
	if resp, _ := get(t, e.h2Client(t), e.url("/page")); resp.ProtoMajor != 2 {
		t.Fatalf("proto %s, want HTTP/2", resp.Proto)
	}
	var stack string
	idle := func() bool {
		stack = connGoroutine(t)
		return strings.Contains(stack, "h2.(*conn).awaitByte")
	}
	if !testbed.Poll(5*time.Second, idle) {
		t.Fatalf("the connection does not wait for the client:\n%s", stack)
	}
	if strings.Contains(stack, "fasthttp") {
		t.Errorf("the idle connection waits on fasthttp's worker:\n%s", stack)
	}
	if runtime.GOOS == "linux" && (!strings.Contains(stack, "h2.waitReadable") || strings.Contains(stack, "crypto/tls")) {
		t.Errorf("the idle connection does not wait on its socket:\n%s", stack)
	}
}

// connGoroutine is the stack of the one goroutine serving an HTTP/2
// connection.
func connGoroutine(t *testing.T) string {
	t.Helper()
	found := connGoroutines()
	if len(found) != 1 {
		t.Fatalf("%d goroutines serve a connection, want 1", len(found))
	}
	return found[0]
}

// connGoroutines are the stacks of the goroutines serving HTTP/2
// connections.
func connGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "proxy/h2.(*conn).serve(") {
			found = append(found, g)
		}
	}
	return found
}

// TestRecordsReadTogetherAreAnsweredAtOnce: two requests in two TLS
// records that reach the server in one segment are both answered,
// although the second is already read from the socket (crypto/tls holds
// it) when the first is answered and the connection would wait.
func TestRecordsReadTogetherAreAnsweredAtOnce(t *testing.T) {
	e := startTLS(t, page725Handler, nil)
	raw, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	bc := &batchConn{Conn: raw}
	c := tls.Client(bc, e.tlsConfig("h2"))
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	first, again := getBlocks()
	bc.hold = true
	fr := http2.NewFramer(c, c)
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	writes := []error{
		fr.WriteSettings(),
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: first, EndStream: true, EndHeaders: true}),
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: again, EndStream: true, EndHeaders: true}),
	}
	for _, err := range writes {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := bc.release(); err != nil {
		t.Fatal(err)
	}
	ended := map[uint32]bool{}
	for !ended[1] || !ended[3] {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("answered %v, then: %v", ended, err)
		}
		if f.Header().Flags.Has(http2.FlagDataEndStream) && (f.Header().Type == http2.FrameData || f.Header().Type == http2.FrameHeaders) {
			ended[f.Header().StreamID] = true
		}
	}
}

// batchConn holds what is written while hold is set, to send it in one
// write.
type batchConn struct {
	net.Conn
	hold bool
	buf  []byte
}

func (c *batchConn) Write(p []byte) (int, error) {
	if !c.hold {
		return c.Conn.Write(p)
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

func (c *batchConn) release() error {
	c.hold = false
	_, err := c.Conn.Write(c.buf)
	return err
}
