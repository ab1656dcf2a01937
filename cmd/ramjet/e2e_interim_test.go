package main_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hintsOrigin is an origin on raw TCP (net/http cannot send a 1xx before
// its answer from a handler the way an application server does): every
// request gets "103 Early Hints" with a Link field, then the final
// answer, on keep-alive connections.
type hintsOrigin struct {
	ln       net.Listener
	requests atomic.Int64
}

const hintLink = "</style.css>; rel=preload; as=style"

func startHintsOrigin(t *testing.T) *hintsOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &hintsOrigin{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by the cleanup
			}
			go o.serve(c)
		}
	}()
	return o
}

func (o *hintsOrigin) URL() string { return "http://" + o.ln.Addr().String() }

func (o *hintsOrigin) serve(c net.Conn) {
	defer c.Close()
	r := textproto.NewReader(bufio.NewReader(c))
	for range 1000 { // bounded: a test sends a handful
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		line, err := r.ReadLine()
		if err != nil {
			return
		}
		hdr, err := r.ReadMIMEHeader()
		if err != nil {
			return
		}
		if n, _ := strconv.Atoi(hdr.Get("Content-Length")); n > 0 {
			if _, err := io.CopyN(io.Discard, r.R, int64(n)); err != nil {
				return
			}
		}
		n := o.requests.Add(1)
		cc := "max-age=300"
		if strings.HasPrefix(line, "POST ") {
			cc = "no-store"
		}
		body := fmt.Sprintf("answer %d", n)
		fmt.Fprintf(c, "HTTP/1.1 103 Early Hints\r\nLink: %s\r\n\r\n", hintLink)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nCache-Control: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", cc, len(body), body)
	}
}

// hintsExchange sends one HTTP/1.1 request on a connection of its own and
// returns every response head it read (interim ones first) and the final
// body.
func hintsExchange(t *testing.T, addr, method, path string) (heads []string, body string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: hints.test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", method, path)
	br := bufio.NewReader(c)
	r := textproto.NewReader(br)
	for range 10 {
		status, err := r.ReadLine()
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		hdr, err := r.ReadMIMEHeader()
		if err != nil {
			t.Fatalf("reading the answer's header: %v", err)
		}
		heads = append(heads, status+" Link="+strings.Join(hdr.Values("Link"), ","))
		if !strings.HasPrefix(status, "HTTP/1.1 1") {
			b, _ := io.ReadAll(br)
			return heads, string(b)
		}
	}
	t.Fatal("more than 10 response heads")
	return nil, ""
}

// An origin's 103 Early Hints reach an HTTP/1.1 client ahead of the
// answer, on a miss and on a pass; the answer is stored as usual, and a
// hit carries no hint (a 1xx is never stored).
func TestEarlyHintsReachHTTP1ClientsAndAreNeverCached(t *testing.T) {
	t.Parallel()
	o := startHintsOrigin(t)
	rj := startRamjet(t, o.URL())
	addr := strings.TrimPrefix(rj.URL, "http://")
	hinted := []string{"HTTP/1.1 103 Early Hints Link=" + hintLink, "HTTP/1.1 200 OK Link="}
	tests := []struct {
		name, method, path string
		heads              []string
		requests           int64 // the origin's count after
	}{
		{"a miss gets the hints", http.MethodGet, "/page", hinted, 1},
		{"the hit gets none", http.MethodGet, "/page", []string{"HTTP/1.1 200 OK Link="}, 1},
		{"a pass gets the hints", http.MethodPost, "/form", hinted, 2},
	}
	first := ""
	for _, tt := range tests {
		heads, body := hintsExchange(t, addr, tt.method, tt.path)
		if strings.Join(heads, " | ") != strings.Join(tt.heads, " | ") {
			t.Fatalf("%s: heads %q, want %q", tt.name, heads, tt.heads)
		}
		if n := o.requests.Load(); n != tt.requests {
			t.Fatalf("%s: origin answered %d requests, want %d", tt.name, n, tt.requests)
		}
		if tt.path == "/page" && first == "" {
			first = body
		} else if tt.path == "/page" && body != first {
			t.Fatalf("%s: body %q, want the stored %q", tt.name, body, first)
		}
	}
}

// Over HTTP/2 the hints go as an interim HEADERS frame (:status 103)
// before the answer's; the hit that follows has none.
func TestEarlyHintsReachHTTP2Clients(t *testing.T) {
	t.Parallel()
	o := startHintsOrigin(t)
	rj := startTLSRamjet(t, newPKI(t), o.URL())
	c := rj.client(t, "h2")
	fetch := func(what string) ([]string, string) {
		return hintedGet(t, c, rj.HTTPS("localhost", "/h2page"), what, 2)
	}
	hints, first := fetch("the miss")
	if want := "103 " + hintLink; len(hints) != 1 || hints[0] != want {
		t.Fatalf("the miss: interim responses %q, want [%q]", hints, want)
	}
	hints, body := fetch("the hit")
	if len(hints) != 0 || body != first {
		t.Fatalf("the hit: interim responses %q, body %q; want none and the stored %q", hints, body, first)
	}
	if n := o.requests.Load(); n != 1 {
		t.Fatalf("origin answered %d requests, want 1", n)
	}
}

// hintedGet GETs url with c, which must answer over HTTP/major with 200,
// and returns the interim responses it got first ("103 <Link values>")
// and the body.
func hintedGet(t *testing.T, c *http.Client, url, what string, major int) (hints []string, body string) {
	t.Helper()
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		hints = append(hints, fmt.Sprintf("%d %s", code, strings.Join(h.Values("Link"), ",")))
		return nil
	}}
	ctx := httptrace.WithClientTrace(context.Background(), trace)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.ProtoMajor != major || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s %d, want HTTP/%d 200", what, resp.Proto, resp.StatusCode, major)
	}
	return hints, string(b)
}
