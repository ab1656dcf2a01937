package main_test

// A large page in RAM is sent from the disk tier's file with sendfile
// after its head (MSG_MORE). A client that reads slowly through a small
// receive buffer makes every send short, head and body alike: the
// answers, pipelined on one connection, must still arrive whole and in
// order, byte for byte what the origin sent.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// slowReader dials addr with a small receive buffer, set before the
// handshake so that the window the server sees stays small.
func slowReader(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestLargeRAMHitsReachASlowReaderWholeAndInOrder(t *testing.T) {
	t.Parallel()
	n := startDiskNode(t, t.TempDir())
	ns := nsFor(t)
	// The bench's page, and one large enough that the answers pipelined
	// outgrow what the kernel queues for a socket (4 MiB by default).
	sizes := []int{30000, 2000000}
	pages, bodies := make([]string, len(sizes)), make([][]byte, len(sizes))
	for i, size := range sizes {
		pages[i] = fmt.Sprintf("/e/%s/p%d?size=%d&%s", ns, i, size, hq("Cache-Control: max-age=300", "Content-Type: application/octet-stream"))
		first := n.get(t, pages[i])
		mustMissStored(t, first, "first request")
		bodies[i] = first.Body
	}
	if !testbed.Poll(testbed.StopTimeout, func() bool { return n.metric(t, "ramjet_disk_written_total") >= float64(len(sizes)) }) {
		t.Fatal("the pages were never written to disk")
	}
	sent := n.metric(t, "ramjet_disk_sendfile_total")

	c := slowReader(t, strings.TrimPrefix(n.rj.URL, "http://"))
	const rounds = 3
	var reqs strings.Builder
	for range rounds {
		for _, p := range pages {
			fmt.Fprintf(&reqs, "GET %s HTTP/1.1\r\nHost: disk.test\r\n\r\n", p)
		}
	}
	if _, err := io.WriteString(c, reqs.String()); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(testbed.StopTimeout)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReaderSize(c, 512) // small reads: the server's sends keep coming up short
	for r := range rounds {
		for i := range pages {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("round %d, page %d: %v", r, i, err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("round %d, page %d: the body broke off after %d bytes: %v", r, i, len(body), err)
			}
			if cs := resp.Header.Get("Cache-Status"); cs != "ramjet; hit" {
				t.Fatalf("round %d, page %d: Cache-Status %q, want a fresh hit", r, i, cs)
			}
			if string(body) != string(bodies[i]) {
				t.Fatalf("round %d, page %d: %d bytes, not the %d the origin sent", r, i, len(body), len(bodies[i]))
			}
		}
	}
	if v := n.metric(t, "ramjet_disk_sendfile_total"); v != sent+rounds*float64(len(sizes)) {
		t.Fatalf("ramjet_disk_sendfile_total moved %v -> %v over %d hits: the hits were not sent from the files", sent, v, rounds*len(sizes))
	}
}
