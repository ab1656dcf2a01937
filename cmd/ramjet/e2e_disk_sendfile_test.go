package main_test

// A hit on a page only on disk is sent from its file (sendfile) over
// plain HTTP/1.1, and copied from memory over TLS and HTTP/2: the same
// bytes and headers either way as the hit from RAM before.

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// sameHeaders are the headers a hit from disk must answer as the hit from
// RAM did.
var sameHeaders = []string{"Content-Type", "Content-Length", "Content-Encoding", "ETag", "Cache-Control", "Date", "Vary"}

func mustSameHit(t *testing.T, got, want result, what string) {
	t.Helper()
	mustFreshHit(t, got, what)
	if string(got.Body) != string(want.Body) {
		t.Fatalf("%s: %d bytes, not the %d of the hit from RAM", what, len(got.Body), len(want.Body))
	}
	for _, h := range sameHeaders {
		if got.Header.Get(h) != want.Header.Get(h) {
			t.Errorf("%s: %s %q, the hit from RAM said %q", what, h, got.Header.Get(h), want.Header.Get(h))
		}
	}
}

func TestDiskOnlyPageIsSentFromItsFileOverHTTP1AndCopiedOverTLSAndH2(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	dir := t.TempDir()
	n := &diskNode{o: startOrigin(t), c: newClient(t), path: dir}
	n.cfg = testbed.WriteConfig(t, "", fmt.Sprintf("cache:\n  disk:\n    path: %q\n    size: 64MiB\n", dir)+smallRAM)
	var rj *tlsRamjet
	start := func() {
		rj = startTLSRamjet(t, p, n.o.URL, "--config", n.cfg)
		n.rj = rj.Ramjet
	}
	start()
	ns := nsFor(t)
	page := page30K(ns, "target", ns+"-target")
	// The Host names no port: the key stays the same across restarts.
	plain := func(hdr ...string) result {
		return get(t, n.c, n.rj.URL+page, append([]string{"Host: disk.test"}, hdr...)...)
	}
	major := map[string]int{"h2": 2, "h1": 1}
	secure := func(proto string) result {
		return protoGet(t, rj.client(t, proto), major[proto], "https://localhost"+page)
	}
	mustMissStored(t, plain(), "plain: first request")
	mustMissStored(t, get(t, rj.client(t, "h2"), "https://localhost"+page), "TLS: first request")
	fromRAM := map[string]result{
		"identity": plain(), "gzip": plain("Accept-Encoding: gzip"),
		"h2": secure("h2"), "h1 over TLS": secure("h1"),
	}
	for what, r := range fromRAM {
		mustFreshHit(t, r, what+" from RAM")
	}
	n.fillPages(t, ns, pageNames("filler", 60))
	if !testbed.Poll(testbed.StopTimeout, func() bool { return n.metric(t, "ramjet_disk_written_total") >= 62 }) {
		t.Fatal("the pages were never all written")
	}
	n.rj.Signal(t, syscall.SIGTERM)
	if code := n.rj.Wait(t, testbed.StopTimeout); code != 0 {
		t.Fatalf("exit status %d after SIGTERM:\n%s", code, n.rj.Output())
	}
	start() // loads the newest files up to 1 MiB: the target stays on disk only
	if v := n.metric(t, "ramjet_disk_loaded_objects"); v >= 60 {
		t.Fatalf("ramjet_disk_loaded_objects = %v: the test needs the page on disk only", v)
	}

	mustSameHit(t, plain(), fromRAM["identity"], "HTTP/1.1 from disk")
	if v := n.metric(t, "ramjet_disk_sendfile_total"); v != 1 {
		t.Fatalf("ramjet_disk_sendfile_total = %v after a hit from disk over HTTP/1.1, want 1", v)
	}
	gz := plain("Accept-Encoding: gzip")
	mustSameHit(t, gz, fromRAM["gzip"], "HTTP/1.1 gzip from disk")
	if gz.Header.Get("Content-Encoding") != "gzip" || string(decodeBody(t, gz)) != string(fromRAM["identity"].Body) {
		t.Fatalf("gzip from disk: Content-Encoding %q, not the page's body", gz.Header.Get("Content-Encoding"))
	}
	sent := n.metric(t, "ramjet_disk_sendfile_total")
	for what, proto := range map[string]string{"h2": "h2", "h1 over TLS": "h1"} {
		mustSameHit(t, secure(proto), fromRAM[what], what+" from disk (copied)")
	}
	if v := n.metric(t, "ramjet_disk_sendfile_total"); v != sent {
		t.Errorf("ramjet_disk_sendfile_total = %v after hits over TLS, want %v: TLS cannot send a file", v, sent)
	}
	if got := n.o.loggedRequests(t, "/e/"+ns+"/target"); got != 2 {
		t.Errorf("origin asked %d times for the page, want twice (http and https, before the restart)", got)
	}
}
