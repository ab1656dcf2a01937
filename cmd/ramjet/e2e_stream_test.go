package main_test

// End-to-end tests that large bodies stream through ramjet in both
// directions without being buffered whole: RSS is sampled from /proc while
// hundreds of MiB pass through. These tests do not run in parallel so the
// RSS and timing they see are ramjet's own.

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

const maxStreamRSS = 150 << 20 // bytes; well below the bodies sent

func TestLargeDownloadStreamsWithFlatRSS(t *testing.T) {
	_, rj, c := setup(t, "cache:\n  max_object_size: 8MiB\n")
	c.Timeout = 0 // the context bounds each download

	tests := []struct {
		name string
		file string
	}{
		{"uncacheable", "stream/big300m.bin"},
		{"cacheable but over max_object_size", "static/big300m.bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := docrootSHA256(t, tt.file)
			req, err := http.NewRequestWithContext(withTimeout(t, 2*time.Minute), http.MethodGet, rj.URL+"/"+tt.file, nil)
			if err != nil {
				t.Fatal(err)
			}
			readBefore := readBytes(t, rj.Pid())
			rss := sampleRSS(rj.Pid())
			resp, err := c.Do(req)
			if err != nil {
				rss.Peak()
				t.Fatal(err)
			}
			defer resp.Body.Close()
			h := sha256.New()
			n, err := io.CopyN(h, resp.Body, 1<<20)
			if err == nil {
				// A slow client: without backpressure ramjet would now
				// read the rest of the body from nginx into memory.
				mustStopReading(t, rj.Pid(), readBefore, n)
				var m int64
				m, err = io.Copy(h, resp.Body)
				n += m
			}
			peak := rss.Peak()
			if err != nil {
				t.Fatalf("download after %d bytes: %v", n, err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if n != size300MiB {
				t.Errorf("received %d bytes, want %d", n, size300MiB)
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != want {
				t.Errorf("sha256 %s, want %s", got, want)
			}
			t.Logf("peak ramjet RSS %d MiB while streaming %d MiB", peak>>20, n>>20)
			if peak > maxStreamRSS {
				t.Errorf("ramjet RSS peaked at %d MiB, want below %d MiB: the body was buffered", peak>>20, maxStreamRSS>>20)
			}
			if cs := parseCacheStatus(resp.Header.Get("Cache-Status")); cs.Hit || cs.Stored {
				t.Errorf("Cache-Status %q for a body over max_object_size, want not stored", cs.Raw)
			}
		})
	}
}

// mustStopReading waits, while the client reads nothing, until ramjet
// stops reading (its read counter holds still for 150 ms: blocked on the
// full socket to the client, or done), then fails if it read far more
// than the client took since readBefore. It first checks that the counter
// shows the sent bytes at all, so that a quiet counter means ramjet
// stopped, not that reads go unseen.
func mustStopReading(t *testing.T, pid int, readBefore, sent int64) {
	t.Helper()
	last, still := readBytes(t, pid), 0
	if !testbed.Poll(10*time.Second, func() bool {
		now := readBytes(t, pid)
		if now == last {
			still++
		} else {
			last, still = now, 0
		}
		return still >= 8 // 8 polls of 20 ms
	}) {
		t.Fatalf("ramjet still reading 10 s after the client stopped (%d MiB read)", (last-readBefore)>>20)
	}
	read := last - readBefore
	if read < sent {
		t.Fatalf("ramjet's read counter grew %d bytes while it sent %d: /proc/%d/io does not show its reads", read, sent, pid)
	}
	t.Logf("ramjet read %d MiB while the client held at %d MiB", read>>20, sent>>20)
	if read > maxStreamRSS {
		t.Errorf("ramjet read %d MiB from the origin for a client that took %d MiB: no backpressure", read>>20, sent>>20)
	}
}

func readBytes(t *testing.T, pid int) int64 {
	t.Helper()
	n, err := testbed.ReadBytes(pid)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLargeUploadStreamsWithFlatRSS(t *testing.T) {
	_, rj, c := setup(t, "server:\n  max_request_body: 512MiB\n")
	c.Timeout = 0 // the context bounds each upload
	const size = 200 << 20
	seed := [32]byte{'u', 'p', 'l', 'o', 'a', 'd'}
	body := func() io.Reader { return io.LimitReader(rand.NewChaCha8(seed), size) }
	sum := sha256.New()
	if _, err := io.Copy(sum, body()); err != nil {
		t.Fatal(err)
	}
	want := hex.EncodeToString(sum.Sum(nil))

	for _, chunked := range []bool{false, true} {
		t.Run("chunked="+strconv.FormatBool(chunked), func(t *testing.T) {
			req, err := http.NewRequestWithContext(withTimeout(t, 2*time.Minute), http.MethodPost, rj.URL+"/upload", body())
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = size
			if chunked {
				req.ContentLength = -1
			}
			req.Header.Set("Content-Type", "application/octet-stream")
			rss := sampleRSS(rj.Pid())
			resp, err := c.Do(req)
			var got []byte
			if err == nil {
				got, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			peak := rss.Peak()
			if err != nil {
				t.Fatalf("upload: %v", err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d; body %.300q", resp.StatusCode, got)
			}
			e := parseEcho(got)
			if e["len"] != strconv.Itoa(size) || e["sha256"] != want {
				t.Errorf("origin received %s bytes with sha256 %s, want %d bytes %s", e["len"], e["sha256"], size, want)
			}
			t.Logf("peak ramjet RSS %d MiB while uploading %d MiB", peak>>20, size>>20)
			if peak > maxStreamRSS {
				t.Errorf("ramjet RSS peaked at %d MiB, want below %d MiB: the request body was buffered", peak>>20, maxStreamRSS>>20)
			}
		})
	}
}
