package main_test

// The origin of TestRFC9111Conformance.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rfcNotConditional is the origin's status for a request that should have
// been conditional and was not (the suite's convention).
const rfcNotConditional = 999

// rfcOrigin is a minimal HTTP/1.1 server on 127.0.0.1 that writes each
// answer byte for byte as its case prescribes (field order, repeated,
// empty or malformed fields, Transfer-Encoding), which net/http's server
// would normalise, can close instead of answering, and records every
// request.
type rfcOrigin struct {
	URL   string
	ln    net.Listener
	cases map[string]*rfcCase // by slug; read-only once started
	wg    sync.WaitGroup      // one per connection, and the accept loop

	mu     sync.Mutex // guards conns, seen
	conns  map[net.Conn]struct{}
	seen   map[string][]rfcSeen // by slug, in arrival order
	closed bool
}

// rfcSeen is one request the origin got, and what it sent back.
type rfcSeen struct {
	step   int // the client's Rfc-Step (the request count when absent)
	header http.Header
	sent   []rfcField // the fields it answered with that are checked at the client, values rendered
}

func startRFCOrigin(t *testing.T, groups []rfcGroup) *rfcOrigin {
	t.Helper()
	o := &rfcOrigin{cases: map[string]*rfcCase{}, conns: map[net.Conn]struct{}{}, seen: map[string][]rfcSeen{}}
	for _, g := range groups {
		for i := range g.cases {
			c := &g.cases[i]
			if _, dup := o.cases[c.slug()]; dup {
				t.Fatalf("two cases share the path /rfc/%s", c.slug())
			}
			o.cases[c.slug()] = c
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.ln, o.URL = ln, "http://"+ln.Addr().String()
	o.wg.Add(1)
	go o.accept()
	t.Cleanup(o.Close)
	return o
}

func (o *rfcOrigin) accept() {
	defer o.wg.Done()
	for {
		conn, err := o.ln.Accept()
		if err != nil {
			return // closed
		}
		o.mu.Lock()
		if o.closed {
			o.mu.Unlock()
			conn.Close()
			return
		}
		o.conns[conn] = struct{}{}
		o.wg.Add(1)
		o.mu.Unlock()
		go o.serve(conn)
	}
}

// Close stops the origin and waits for its connections to end.
func (o *rfcOrigin) Close() {
	o.mu.Lock()
	o.closed = true
	for conn := range o.conns {
		conn.Close()
	}
	o.mu.Unlock()
	o.ln.Close()
	o.wg.Wait()
}

func (o *rfcOrigin) serve(conn net.Conn) {
	defer o.wg.Done()
	defer func() {
		o.mu.Lock()
		delete(o.conns, conn)
		o.mu.Unlock()
		conn.Close()
	}()
	br := bufio.NewReader(conn)
	for {
		if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
			return
		}
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, err = io.Copy(io.Discard, req.Body)
		req.Body.Close()
		if err != nil {
			return
		}
		raw := o.answer(req)
		if raw == nil {
			return // the case closes the connection
		}
		if _, err := conn.Write(raw); err != nil || req.Close {
			return
		}
	}
}

// requests is what the origin got for a case so far.
func (o *rfcOrigin) requests(slug string) []rfcSeen {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.seen[slug])
}

// answer records req and returns the raw answer its case prescribes, nil
// to close the connection.
func (o *rfcOrigin) answer(req *http.Request) []byte {
	slug, _, _ := strings.Cut(strings.TrimPrefix(req.URL.Path, "/rfc/"), "/")
	c := o.cases[slug]
	if c == nil {
		return rfcRaw(http.StatusNotFound, nil, "no case "+slug, req.Method)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	got := o.seen[slug]
	k, err := strconv.Atoi(req.Header.Get("Rfc-Step"))
	if err != nil {
		k = len(got) + 1
	}
	if k < 1 || k > len(c.steps) {
		return rfcRaw(http.StatusConflict, nil, fmt.Sprintf("%s has no request %d", c.id, k), req.Method)
	}
	s := &c.steps[k-1]
	now := time.Now()
	status := rfcOr(s.status, http.StatusOK)
	if s.want == rfcETagCheck || s.want == rfcDateCheck {
		status = rfcNotConditional
		if prevValidates(c, k, got, req) {
			status = http.StatusNotModified
		}
	}
	fields := []rfcField{
		hv("X-Origin-Count", strconv.Itoa(len(got)+1)),
		hv("X-Origin-Step", strconv.Itoa(k)),
		hv("X-Origin-Now", strconv.FormatInt(now.UnixNano(), 10)),
	}
	seen := rfcSeen{step: k, header: req.Header.Clone()}
	for _, f := range s.resp {
		v := rfcField{name: f.name, value: rfcRender(f, now)}
		if device, _, _ := strings.Cut(req.Header.Get("Surrogate-Capability"), "="); device != "" && strings.EqualFold(f.name, "Surrogate-Control") {
			v.value = strings.ReplaceAll(v.value, "CAPABILITY_TARGET", strings.TrimSpace(device))
		}
		fields = append(fields, v)
		if !f.loose {
			seen.sent = append(seen.sent, v)
		}
	}
	o.seen[slug] = append(got, seen)
	if s.disconnect {
		return nil
	}
	text := s.text
	if text == "" {
		text = c.token()
	}
	return rfcRaw(status, fields, text, req.Method)
}

// prevValidates reports whether req carries the validator the case's
// previous step answered with: its ETag in If-None-Match or its
// Last-Modified in If-Modified-Since, compared as sent.
func prevValidates(c *rfcCase, k int, got []rfcSeen, req *http.Request) bool {
	if k < 2 {
		return false
	}
	prev := map[string]string{}
	for _, f := range c.steps[k-2].resp {
		prev[http.CanonicalHeaderKey(f.name)] = f.value
	}
	for _, g := range got {
		if g.step == k-1 {
			for _, f := range g.sent {
				prev[http.CanonicalHeaderKey(f.name)] = f.value
			}
		}
	}
	etag, lm := prev["Etag"], prev["Last-Modified"]
	return (etag != "" && req.Header.Get("If-None-Match") == etag) ||
		(lm != "" && req.Header.Get("If-Modified-Since") == lm)
}

// rfcRaw writes an answer: the fields as given, then Content-Type and
// Content-Length unless given, then the body (cut to a given
// Content-Length, chunked under Transfer-Encoding: chunked).
func rfcRaw(status int, fields []rfcField, text, method string) []byte {
	var b strings.Builder
	reason := http.StatusText(status)
	if reason == "" {
		reason = "Whatever"
	}
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, reason)
	has := map[string]string{}
	for _, f := range fields {
		fmt.Fprintf(&b, "%s: %s\r\n", f.name, f.value)
		has[http.CanonicalHeaderKey(f.name)] = f.value
	}
	bodyless := status == http.StatusNoContent || status == http.StatusNotModified || status < 200
	if _, ok := has["Content-Type"]; !ok && !bodyless {
		b.WriteString("Content-Type: text/plain\r\n")
	}
	chunked := strings.EqualFold(has["Transfer-Encoding"], "chunked")
	if cl, ok := has["Content-Length"]; ok {
		n, _ := strconv.Atoi(cl)
		text = (text + strings.Repeat(".", max(n-len(text), 0)))[:max(n, 0)]
	} else if !bodyless && !chunked {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(text))
	}
	b.WriteString("\r\n")
	switch {
	case bodyless || method == http.MethodHead:
	case chunked:
		fmt.Fprintf(&b, "%x\r\n%s\r\n0\r\n\r\n", len(text), text)
	default:
		b.WriteString(text)
	}
	return []byte(b.String())
}
