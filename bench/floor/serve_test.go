package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// testDeadline bounds each client read and write, so that a broken server
// fails the test instead of hanging it.
const testDeadline = 10 * time.Second

// startServe runs serve on a loopback port; the function it returns stops
// it and fails the test unless serve returned nil.
func startServe(t *testing.T, serve serveFunc, pages *store) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, ln, pages) }()
	return ln.Addr().String(), func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

// getTwice asks for target twice on c, keep-alive, and checks both are
// hits with the origin's body.
func getTwice(t *testing.T, c net.Conn, br *bufio.Reader, target string, body []byte) {
	t.Helper()
	for i := range 2 {
		c.SetDeadline(time.Now().Add(testDeadline))
		if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: floor\r\n\r\n", target); err != nil {
			t.Fatalf("%s, request %d: %v", target, i+1, err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s, request %d: %v", target, i+1, err)
		}
		checkHit(t, resp, body)
		resp.Body.Close()
	}
}

// checkServes runs serve against a test origin: two keep-alive GETs of a
// small page and two of a 40 KB one on one connection, each a hit with
// the origin's body, the origin asked once per page; then the server
// stops and closes the connection.
func checkServes(t *testing.T, serve serveFunc, sendfile bool) {
	o := newTestOrigin(t)
	pages := newTestStore(t, o, sendfile)
	addr, stop := startServe(t, serve, pages)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	getTwice(t, c, br, "/small", smallBody)
	getTwice(t, c, br, "/big", bigBody)
	for _, target := range []string{"/small", "/big"} {
		if n := o.times(target); n != 1 {
			t.Errorf("origin asked for %s %d times, want once", target, n)
		}
	}
	if p, err := pages.get([]byte("/big")); err != nil || (p.file != nil) != sendfile {
		t.Errorf("the 40 KB page sent from a file: %v, want %v (err %v)", p != nil && p.file != nil, sendfile, err)
	}

	stop()
	c.SetDeadline(time.Now().Add(testDeadline))
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after stop, read %d bytes, err %v; want the connection closed", n, err)
	}
}

func TestGorServesHitsFromOneOriginFetch(t *testing.T) {
	checkServes(t, serveGor, false)
}

func TestGorSendsLargePagesFromAFile(t *testing.T) {
	checkServes(t, serveGor, true)
}

func TestEvlServesHitsFromOneOriginFetch(t *testing.T) {
	checkServes(t, serveEvl, false)
}

func TestEvlSendsLargePagesFromAFile(t *testing.T) {
	checkServes(t, serveEvl, true)
}

func TestFhServesHitsFromOneOriginFetch(t *testing.T) {
	checkServes(t, serveFh, false)
}

func TestOwnServesHitsFromOneOriginFetch(t *testing.T) {
	checkServes(t, serveOwn(true), false)
}

func TestOwnHeldServesHitsFromOneOriginFetch(t *testing.T) {
	checkServes(t, serveOwn(false), false)
}

// TestOwnAnswersAHeadSplitAcrossReadsAndPipelinedRequests: the own loop
// keeps a partial head (and its pooled state) until the rest comes, and
// answers two requests sent in one write in order.
func TestOwnAnswersAHeadSplitAcrossReadsAndPipelinedRequests(t *testing.T) {
	o := newTestOrigin(t)
	addr, stop := startServe(t, serveOwn(true), newTestStore(t, o, false))
	defer stop()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testDeadline))
	br := bufio.NewReader(c)
	if _, err := io.WriteString(c, "GET /small HTTP/1.1\r\nHo"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := br.Peek(1); err == nil {
		t.Fatal("answered half a request")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		// the peek is bounded by a short deadline below; any other error fails
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testDeadline))
	if _, err := io.WriteString(c, "st: floor\r\n\r\nGET /small HTTP/1.1\r\nHost: floor\r\n\r\nGET /small HTTP/1.1\r\nHost: floor\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
		checkHit(t, resp, smallBody)
		resp.Body.Close()
	}
}
