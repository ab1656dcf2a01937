package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/cache/disk"
)

// pageOrigin serves /big (60,000 characters that compress to about half:
// every copy is over ramFileMin) and /small, fresh for an hour.
func pageOrigin(t *testing.T) (string, string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < 60000 {
		fmt.Fprintf(&b, "%016x", rng.Uint64())
	}
	big := b.String()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Sat, 05 Dec 2026 07:00:00 GMT")
		if r.URL.Path == "/small" {
			io.WriteString(w, strings.Repeat("s", 725)) //nolint:errcheck // the test reads it
			return
		}
		io.WriteString(w, big) //nolint:errcheck // the test reads it
	}))
	t.Cleanup(origin.Close)
	return origin.URL, big
}

// diskProxy serves a proxy of originURL whose cache has a disk tier.
func diskProxy(t *testing.T, originURL string) (string, *disk.Tier) {
	t.Helper()
	c, err := cache.New(cache.Config{Size: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	tier, err := disk.Open(disk.Config{Path: t.TempDir(), Size: 64 << 20}, c)
	if err != nil {
		t.Fatal(err)
	}
	tier.Start(context.Background())
	p, err := New(testConfig(originURL), Stores{Public: c}, discardLog)
	if err != nil {
		t.Fatal(err)
	}
	p.Start(context.Background())
	t.Cleanup(func() {
		p.Close()
		tier.Close() //nolint:errcheck // the test's directory
		c.Close()
	})
	return serveProxy(t, p), tier
}

// getRaw is one GET on its own connection: the head as sent, without its
// Date and Age lines (the only ones built from the clock), and the body.
func getRaw(t *testing.T, base, path, acceptEncoding string) (string, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: example.test\r\nAccept-Encoding: %s\r\n\r\n", path, acceptEncoding)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second)) //nolint:errcheck // a stuck read fails below
	r := bufio.NewReader(conn)
	var head strings.Builder
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("head: %v", err)
		}
		if line == "\r\n" {
			break
		}
		name, value, _ := strings.Cut(line, ":")
		switch textproto.CanonicalMIMEHeaderKey(name) {
		case "Date", "Age":
			continue
		case "Content-Length":
			n, _ = strconv.Atoi(strings.TrimSpace(value))
		}
		head.WriteString(line)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatalf("body of %d bytes: %v", n, err)
	}
	return head.String(), body
}

// A large fresh hit in RAM is sent from the disk tier's file written from
// it, with the very head a hit copied from RAM has (a proxy without a
// disk tier answers the same bytes), whichever copy the client accepts;
// a small one is copied from RAM.
func TestLargeRAMHitIsSentFromTheFileWithTheRAMHitsHead(t *testing.T) {
	originURL, big := pageOrigin(t)
	withDisk, tier := diskProxy(t, originURL)
	_, plain := startProxy(t, testConfig(originURL))
	for _, base := range []string{withDisk, plain} {
		getRaw(t, base, "/big", "")
		getRaw(t, base, "/small", "")
	}
	if !testbed.Poll(5*time.Second, func() bool { return tier.Snapshot().Written >= 2 }) {
		t.Fatalf("the pages were not written: %+v", tier.Snapshot())
	}
	for _, ae := range []string{"", "gzip", "br, gzip", "identity"} {
		sent := tier.Snapshot().Sent
		head, body := getRaw(t, withDisk, "/big", ae)
		if got := tier.Snapshot().Sent; got != sent+1 {
			t.Errorf("Accept-Encoding %q: %d sent from the file, want 1", ae, got-sent)
		}
		wantHead, wantBody := getRaw(t, plain, "/big", ae)
		if head != wantHead || string(body) != string(wantBody) {
			t.Errorf("Accept-Encoding %q: sent from the file\n%s(%d bytes), from RAM\n%s(%d bytes)", ae, head, len(body), wantHead, len(wantBody))
		}
		if ae == "" && string(body) != big {
			t.Error("the identity body is not the page")
		}
		if !strings.Contains(head, "Cache-Status: ramjet; hit") {
			t.Errorf("Accept-Encoding %q: not a hit:\n%s", ae, head)
		}
	}
	sent := tier.Snapshot().Sent
	head, body := getRaw(t, withDisk, "/small", "")
	wantHead, wantBody := getRaw(t, plain, "/small", "")
	if tier.Snapshot().Sent != sent || head != wantHead || string(body) != string(wantBody) {
		t.Errorf("small page: %d sent from the file (want 0), head\n%s want\n%s", tier.Snapshot().Sent-sent, head, wantHead)
	}
}
