package htaccess

import (
	"net/netip"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hdr is a request header for tests.
type hdr map[string]string

func (h hdr) Peek(k string) []byte {
	for name, v := range h {
		if strings.EqualFold(name, k) {
			return []byte(v)
		}
	}
	return nil
}

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time         { return c.t }
func (c *clock) add(d time.Duration)    { c.t = c.t.Add(d) }
func newClock() *clock                  { return &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)} }
func (c *clock) cfg(root string) Config { return Config{Root: root, Now: c.now} }

// writeTree lays out files under a new root: names ending in "/" are
// directories, the rest files with their contents.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func newTree(t *testing.T, files map[string]string) (*Tree, *clock) {
	t.Helper()
	c := newClock()
	tr, err := NewTree(c.cfg(writeTree(t, files)))
	if err != nil {
		t.Fatal(err)
	}
	return tr, c
}

// request builds a Request for "METHOD /path?query" from 203.0.113.7.
func request(line string, h hdr) *Request {
	method, target, _ := strings.Cut(line, " ")
	p, q, _ := strings.Cut(target, "?")
	if h == nil {
		h = hdr{}
	}
	if _, ok := h["Host"]; !ok {
		h["Host"] = "example.com"
	}
	return &Request{
		Method: []byte(method), Path: []byte(p), Query: []byte(q), Host: []byte(h["Host"]),
		RequestLine: []byte(method + " " + target + " HTTP/1.1"), Protocol: []byte("HTTP/1.1"),
		Header: h, Client: netip.MustParseAddr("203.0.113.7"), Port: 80,
	}
}

func eval(t *testing.T, tr *Tree, line string, h hdr) *Outcome {
	t.Helper()
	o := &Outcome{}
	tr.Eval(request(line, h), o)
	return o
}

// canonical lets tests name headers in any case.
func canonical(k string) string { return textproto.CanonicalMIMEHeaderKey(k) }

// respHeader is a response header for Apply tests.
type respHeader map[string][]string

func (h respHeader) Peek(k string) []byte {
	if v := h[canonical(k)]; len(v) > 0 {
		return []byte(strings.Join(v, ", "))
	}
	return nil
}
func (h respHeader) Set(k, v string) { h[canonical(k)] = []string{v} }
func (h respHeader) Add(k, v string) { h[canonical(k)] = append(h[canonical(k)], v) }
func (h respHeader) Del(k string)    { delete(h, canonical(k)) }

func writeFile(t *testing.T, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
