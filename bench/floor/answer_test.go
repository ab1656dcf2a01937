package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// recorder is an answerWriter that keeps each write, a file's bytes read
// back after the head they were sent with.
type recorder struct{ writes [][]byte }

func (r *recorder) Write(b []byte) (int, error) {
	r.writes = append(r.writes, bytes.Clone(b))
	return len(b), nil
}

func (r *recorder) SendFile(head []byte, fd int, off, n int64, _ bool) (int64, error) {
	b := append(bytes.Clone(head), make([]byte, n)...)
	m, err := unix.Pread(fd, b[len(head):], off)
	r.writes = append(r.writes, b[:len(head)+m])
	return int64(m), err
}

func (r *recorder) all() []byte { return bytes.Join(r.writes, nil) }

// readAnswers parses every answer in b.
func readAnswers(t *testing.T, b []byte) []*http.Response {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(b))
	var resps []*http.Response
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return resps
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v in %q", len(resps)+1, err, b)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("answer %d: body: %v", len(resps)+1, err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resps = append(resps, resp)
	}
}

// checkHit fails unless resp is a 200 hit with body.
func checkHit(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	got, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode != http.StatusOK:
		t.Errorf("status %d, want 200", resp.StatusCode)
	case !strings.Contains(resp.Header.Get("Cache-Status"), "hit"):
		t.Errorf("Cache-Status %q, want a hit", resp.Header.Get("Cache-Status"))
	case resp.Header.Get("Content-Type") != pageType:
		t.Errorf("Content-Type %q, want %q", resp.Header.Get("Content-Type"), pageType)
	case !bytes.Equal(got, body):
		t.Errorf("body of %d bytes differs from the origin's %d", len(got), len(body))
	}
}

func newTestResponder(t *testing.T, sendfile bool) (*responder, *testOrigin) {
	o := newTestOrigin(t)
	return &responder{pages: newTestStore(t, o, sendfile)}, o
}

func TestCompleteRequestIsAnsweredWithTheOriginPage(t *testing.T) {
	r, _ := newTestResponder(t, false)
	in := []byte("GET /small HTTP/1.1\r\nHost: floor\r\n\r\n")
	var w recorder
	used, err := r.answer(in, &w)
	if err != nil || used != len(in) {
		t.Fatalf("answer: used %d of %d, err %v", used, len(in), err)
	}
	resps := readAnswers(t, w.all())
	if len(resps) != 1 {
		t.Fatalf("%d answers, want 1", len(resps))
	}
	checkHit(t, resps[0], smallBody)
}

func TestHalfARequestWaitsForTheRest(t *testing.T) {
	r, _ := newTestResponder(t, false)
	req := "GET /small HTTP/1.1\r\nHost: floor\r\n\r\n"
	box := newInbox()
	var w recorder
	half := copy(box.free(), req[:20])
	if err := box.took(half, r, &w); err != nil || len(w.writes) != 0 {
		t.Fatalf("half a request: err %v, %d writes, want none", err, len(w.writes))
	}
	rest := copy(box.free(), req[20:])
	if err := box.took(rest, r, &w); err != nil {
		t.Fatalf("the rest: %v", err)
	}
	resps := readAnswers(t, w.all())
	if len(resps) != 1 || box.n != 0 {
		t.Fatalf("%d answers, %d bytes left; want 1 and 0", len(resps), box.n)
	}
	checkHit(t, resps[0], smallBody)
}

func TestTwoPipelinedRequestsAreAnsweredInOneWrite(t *testing.T) {
	r, o := newTestResponder(t, false)
	in := []byte("GET /small HTTP/1.1\r\n\r\nGET /small HTTP/1.1\r\nHost: floor\r\n\r\nGET /sm")
	var w recorder
	used, err := r.answer(in, &w)
	if err != nil || used != len(in)-len("GET /sm") {
		t.Fatalf("answer: used %d of %d, err %v", used, len(in), err)
	}
	if len(w.writes) != 1 {
		t.Fatalf("%d writes, want 1", len(w.writes))
	}
	resps := readAnswers(t, w.all())
	if len(resps) != 2 {
		t.Fatalf("%d answers, want 2", len(resps))
	}
	for _, resp := range resps {
		checkHit(t, resp, smallBody)
	}
	if n := o.times("/small"); n != 1 {
		t.Errorf("origin asked %d times, want once", n)
	}
}

func TestPipelinedRequestForAFilePageKeepsTheOrder(t *testing.T) {
	r, _ := newTestResponder(t, true)
	in := []byte("GET /small HTTP/1.1\r\n\r\nGET /big HTTP/1.1\r\n\r\nGET /small HTTP/1.1\r\n\r\n")
	var w recorder
	if _, err := r.answer(in, &w); err != nil {
		t.Fatal(err)
	}
	resps := readAnswers(t, w.all())
	if len(resps) != 3 {
		t.Fatalf("%d answers, want 3", len(resps))
	}
	for i, body := range [][]byte{smallBody, bigBody, smallBody} {
		checkHit(t, resps[i], body)
	}
}

func TestMalformedRequestLineIsRefusedAndCloses(t *testing.T) {
	for _, line := range []string{
		"GET",
		"GET /small",
		"GET  HTTP/1.1",
		"GET small HTTP/1.1",
		"GET /small SPDY/3",
		"",
	} {
		t.Run(line, func(t *testing.T) {
			r, _ := newTestResponder(t, false)
			good := "GET /small HTTP/1.1\r\n\r\n"
			in := []byte(good + line + "\r\nHost: floor\r\n\r\n")
			var w recorder
			used, err := r.answer(in, &w)
			if !errors.Is(err, errRefused) || used != len(good) {
				t.Fatalf("answer: used %d, err %v; want %d and errRefused", used, err, len(good))
			}
			resps := readAnswers(t, w.all())
			if len(resps) != 2 {
				t.Fatalf("%d answers, want 2", len(resps))
			}
			checkHit(t, resps[0], smallBody)
			if resps[1].StatusCode != http.StatusBadRequest || !resps[1].Close {
				t.Errorf("status %d, close %v; want 400 and close", resps[1].StatusCode, resps[1].Close)
			}
		})
	}
}

func TestOtherMethodsAreRefusedAndClose(t *testing.T) {
	r, _ := newTestResponder(t, false)
	var w recorder
	_, err := r.answer([]byte("POST /small HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"), &w)
	resps := readAnswers(t, w.all())
	if !errors.Is(err, errRefused) || len(resps) != 1 || resps[0].StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("err %v, %d answers; want errRefused and one 405", err, len(resps))
	}
}

func TestOversizedRequestIsRefusedAndCloses(t *testing.T) {
	r, _ := newTestResponder(t, false)
	box := newInbox()
	var w recorder
	n := copy(box.free(), "GET /small HTTP/1.1\r\nCookie: "+strings.Repeat("a", maxRequest))
	err := box.took(n, r, &w)
	resps := readAnswers(t, w.all())
	if !errors.Is(err, errRefused) || len(resps) != 1 {
		t.Fatalf("err %v, %d answers; want errRefused and one answer", err, len(resps))
	}
	if resps[0].StatusCode != http.StatusRequestHeaderFieldsTooLarge || !resps[0].Close {
		t.Errorf("status %d, close %v; want 431 and close", resps[0].StatusCode, resps[0].Close)
	}
}

func TestOriginErrorIsAnswered502AndTriedAgain(t *testing.T) {
	r, o := newTestResponder(t, false)
	in := []byte("GET /broken HTTP/1.1\r\n\r\nGET /broken HTTP/1.1\r\n\r\n")
	var w recorder
	if _, err := r.answer(in, &w); err != nil {
		t.Fatalf("a 502 keeps the connection: %v", err)
	}
	resps := readAnswers(t, w.all())
	if len(resps) != 2 || resps[0].StatusCode != http.StatusBadGateway || resps[1].StatusCode != http.StatusBadGateway {
		t.Fatalf("%d answers, want two 502s", len(resps))
	}
	if n := o.times("/broken"); n != 2 {
		t.Errorf("origin asked %d times, want 2: a failure is not kept", n)
	}
}

func TestParseArgsTakesRamjetsCommandLine(t *testing.T) {
	got := parseArgs([]string{"serve", "--config", "x.yaml", "--listen", "127.0.0.1:1",
		"--admin", "127.0.0.1:2", "-origin=http://127.0.0.1:3", "--log-level", "debug"})
	want := options{command: "serve", listen: "127.0.0.1:1", origin: "http://127.0.0.1:3"}
	if got != want {
		t.Errorf("parseArgs = %+v, want %+v", got, want)
	}
}
