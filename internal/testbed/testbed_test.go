package testbed

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFreePortsAreDistinct(t *testing.T) {
	ports := FreePorts(t, 8)
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: want 8 distinct positive ports", ports)
		}
		seen[p] = true
	}
}

// TestFreePortsLieBelowTheEphemeralRange: no outgoing connection of a
// test beside this one takes a port FreePorts chose as its local port.
func TestFreePortsLieBelowTheEphemeralRange(t *testing.T) {
	lo, first := quietPorts()
	if first <= lo {
		t.Skipf("the ephemeral range starts at %d: no room below it", first)
	}
	for _, p := range FreePorts(t, 64) {
		if p < lo || p >= first {
			t.Fatalf("port %d: want one in [%d, %d), below the ephemeral ports", p, lo, first)
		}
	}
}

func TestPollStopsAtTheConditionOrTheDeadline(t *testing.T) {
	n := 0
	if !Poll(5*time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("Poll returned after %d calls, want true after 3", n)
	}
	start := time.Now()
	if Poll(50*time.Millisecond, func() bool { return false }) {
		t.Fatal("Poll of a condition that never holds returned true")
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 2*time.Second {
		t.Fatalf("Poll gave up after %v, want about 50ms", d)
	}
}

// fatalRecorder is a test that records Fatalf instead of stopping.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
}

func TestWaitForFailsNamingWhatItWaitedFor(t *testing.T) {
	ok := &fatalRecorder{TB: t}
	n := 0
	WaitFor(ok, 5*time.Second, "the third call", func() bool { n++; return n == 3 })
	if ok.fatal != "" || n != 3 {
		t.Fatalf("WaitFor of a condition that holds on the third call: %d calls, failed %q", n, ok.fatal)
	}
	never := &fatalRecorder{TB: t}
	WaitFor(never, 50*time.Millisecond, "the sky to fall", func() bool { return false })
	if want := "timed out after 50ms waiting for the sky to fall"; never.fatal != want {
		t.Fatalf("WaitFor of a condition that never holds failed %q, want %q", never.fatal, want)
	}
}

func TestSocketCountFollowsOpenAndClose(t *testing.T) {
	count := func() int {
		t.Helper()
		n, err := SocketCount(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	ln, c, peer := connectedPair(t)
	if n := count(); n != before+3 {
		t.Fatalf("%d sockets with a listener and both ends of a connection open, want %d", n, before+3)
	}
	for _, cl := range []interface{ Close() error }{peer, c, ln} {
		cl.Close()
	}
	if n := count(); n != before {
		t.Fatalf("%d sockets after closing them all, want %d", n, before)
	}
}

func TestReadRESP(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"+PONG\r\n", "PONG", ""},
		{":42\r\n", "42", ""},
		{"$5\r\nhello\r\n", "hello", ""},
		{"$-1\r\n", "", ""},
		{"*2\r\n$1\r\na\r\n:2\r\n", "a\n2", ""},
		{"-ERR wrong\r\n", "", "ERR wrong"},
		{"?\r\n", "", "unexpected"},
	}
	for _, tt := range tests {
		got, err := readRESP(bufio.NewReader(strings.NewReader(tt.in)), 0)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("readRESP(%q) error %v, want one containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("readRESP(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestRunCmdKillsACommandPastItsDeadline(t *testing.T) {
	start := time.Now()
	if _, err := RunCmd(exec.Command("sleep", "10"), 100*time.Millisecond); err == nil {
		t.Fatal("sleep 10 within 100ms succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("RunCmd returned after %v", d)
	}
	out, err := RunCmd(exec.Command("sh", "-c", "echo out; echo err >&2"), 10*time.Second)
	if err != nil || out != "out\nerr\n" {
		t.Fatalf("RunCmd = %q, %v; want both streams", out, err)
	}
}

func TestStartPHPCGIAcceptsAndStopsAtCleanup(t *testing.T) {
	var addr string
	t.Run("start", func(t *testing.T) {
		addr = StartPHPCGI(t, 2)
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	})
	// The subtest's cleanup killed the group: nothing accepts any more.
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("php-cgi still accepts on %s after its test ended", addr)
	}
}

// connectedPair is a loopback listener, a connection to it and the
// listener's end of that connection; the caller closes them.
func connectedPair(t *testing.T) (ln net.Listener, c, peer net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if c, err = net.Dial("tcp", ln.Addr().String()); err != nil {
		ln.Close()
		t.Fatal(err)
	}
	if peer, err = ln.Accept(); err != nil {
		c.Close()
		ln.Close()
		t.Fatal(err)
	}
	return ln, c, peer
}

func TestTCPConnsShowWhichEndClosedFirst(t *testing.T) {
	ln, c, peer := connectedPair(t)
	defer ln.Close()
	defer peer.Close()
	conns, err := ConnsTo(os.Getpid(), ln.Addr().String())
	if err != nil || len(conns) != 1 || conns[0].Local != c.LocalAddr().String() || conns[0].State != "ESTABLISHED" {
		t.Fatalf("ConnsTo(self, listener) = %+v, %v; want the one established connection from %s", conns, err, c.LocalAddr())
	}
	c.Close()
	var here, there TCPConn
	ok := Poll(5*time.Second, func() bool {
		here, _, _ = TCPConnBetween(c.LocalAddr().String(), ln.Addr().String())
		there, _, _ = TCPConnBetween(peer.LocalAddr().String(), peer.RemoteAddr().String())
		return here.ClosedHere() && there.State == "CLOSE_WAIT"
	})
	if !ok || there.ClosedHere() {
		t.Fatalf("after the dialer closed: its end %+v, the accepted end %+v; want FIN_WAIT2 or TIME_WAIT, and CLOSE_WAIT", here, there)
	}
}

func TestStartApacheServesLogsAndStopsAtCleanup(t *testing.T) {
	var addr string
	t.Run("start", func(t *testing.T) {
		root := PublicDir(t)
		if err := os.WriteFile(filepath.Join(root, "page.html"), []byte("apache page\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		a := StartApache(t, ApacheConfig{VirtualHost: fmt.Sprintf("\tDocumentRoot %[1]s\n\t<Directory %[1]s>\n\t\tRequire all granted\n\t</Directory>\n", root)})
		addr = a.Addr
		for range 2 {
			resp, err := http.Get(a.URL + "/page.html")
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || string(body) != "apache page\n" {
				t.Fatalf("GET /page.html: %d %q %v; want 200 and the file", resp.StatusCode, body, err)
			}
		}
		if n := a.WaitRequests(t, "/page.html", 2); n != 2 {
			t.Fatalf("Requests(/page.html) = %d after two GETs, want 2", n)
		}
	})
	// The subtest's cleanup stopped it: nothing accepts any more.
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("apache2 still accepts on %s after its test ended", addr)
	}
}
