package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"time"
)

// errorHeader is where ramjet names why it answered a 5xx itself
// (proxy/errorreason.go); a 5xx without it is the origin's own.
const errorHeader = "Ramjet-Error"

// answer is what one request got.
type answer struct {
	url         string
	code        int
	body        string
	reason      string // errorHeader's value
	cacheStatus string // Cache-Status: how ramjet came by the answer
	cached      bool   // the node held a fresh copy when it was asked
	err         error
}

// why is the reason a failed answer carries, for a failure's message and
// count: ramjet's errorHeader and Cache-Status, or that the origin sent
// the status itself.
func (a answer) why() string {
	reason := a.reason
	if reason == "" {
		reason = "no " + errorHeader + ": the origin's own status"
	}
	if a.cacheStatus != "" {
		reason += "; Cache-Status: " + a.cacheStatus
	}
	return reason
}

// idleRequest asks /hit/1 again on an idle connection of node A.
func idleRequest(c net.Conn) answer {
	a := answer{url: "http://" + c.RemoteAddr().String() + "/hit/1 (idle connection " + c.LocalAddr().String() + ")"}
	if _, a.err = io.WriteString(c, "GET /hit/1 HTTP/1.1\r\nHost: soak\r\n\r\n"); a.err != nil {
		return a
	}
	return readAnswer(c, a)
}

// readAnswer reads the answer to the request just sent on c into a.
func readAnswer(c net.Conn, a answer) answer {
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		a.err = err
		return a
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.code, a.body, a.err = resp.StatusCode, string(b), err
	a.reason, a.cacheStatus = resp.Header.Get(errorHeader), resp.Header.Get("Cache-Status")
	return a
}

// closingRequest asks /hit/2 on c, a connection of its own that it
// closes, and reads the answer into a.
func closingRequest(c net.Conn, a answer) answer {
	if _, a.err = io.WriteString(c, "GET /hit/2 HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n"); a.err != nil {
		return a
	}
	return readAnswer(c, a)
}

// judgeIdle fails an idle connection's answer unless it is a 200: it is
// asked for a page every minute, well within the idle timeout, and a
// failure names the connection, the reason and what was down.
func (s *soak) judgeIdle(when string, a answer) {
	switch {
	case a.err != nil:
		s.fail("idle connection %s: %s: %v", when, a.url, a.err)
	case a.code != http.StatusOK:
		s.failAnswer("idle "+when, a, "")
	}
}
