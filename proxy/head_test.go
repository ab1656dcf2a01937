package proxy

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// rawGet sends one HTTP/1.1 GET on a connection of its own and returns
// the answer's status line, Date lines and Cache-Status, as they came on
// the wire (net/http would fold two Date lines into one field).
func rawGet(t *testing.T, base, path string, hdr ...string) (status string, dates []string, cacheStatus string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n" + strings.Join(hdr, "") + "\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	status, err = br.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	status = strings.TrimRight(status, "\r\n")
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return status, dates, cacheStatus
		}
		name, value, _ := strings.Cut(line, ":")
		switch strings.ToLower(name) {
		case "date":
			dates = append(dates, strings.TrimSpace(value))
		case "cache-status":
			cacheStatus = strings.TrimSpace(value)
		}
	}
}

// A hit carries the Date the origin sent, once; an answer the cache does
// not keep carries one Date, the current one.
func TestHitCarriesTheStoredDateOnce(t *testing.T) {
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", past)
		if r.URL.Path == "/pass" {
			w.Header().Set("Cache-Control", "no-store")
		} else {
			w.Header().Set("Cache-Control", "max-age=600")
			w.Header().Set("ETag", `"v1"`)
		}
		w.Write([]byte("<p>page</p>"))
	})
	_, base := startProxy(t, testConfig(o.URL))
	tests := []struct {
		name, path, status, cacheStatus string
		hdr                             []string
		stored                          bool
	}{
		{name: "the miss that stores it", path: "/page", status: "HTTP/1.1 200 OK", cacheStatus: "ramjet; fwd=miss; stored", stored: true},
		{name: "a hit", path: "/page", status: "HTTP/1.1 200 OK", cacheStatus: "ramjet; hit", stored: true},
		{name: "a 304 from the cache", path: "/page", status: "HTTP/1.1 304 Not Modified", cacheStatus: "ramjet; hit", hdr: []string{"If-None-Match: \"v1\"\r\n"}, stored: true},
		{name: "a hit in gzip", path: "/page", status: "HTTP/1.1 200 OK", cacheStatus: "ramjet; hit", hdr: []string{"Accept-Encoding: gzip\r\n"}, stored: true},
		{name: "an answer not stored", path: "/pass", status: "HTTP/1.1 200 OK", cacheStatus: "ramjet; fwd=miss; detail=no-store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, dates, cs := rawGet(t, base, tt.path, tt.hdr...)
			if status != tt.status {
				t.Fatalf("status line %q, want %q", status, tt.status)
			}
			if cs != tt.cacheStatus {
				t.Fatalf("Cache-Status %q, want %q", cs, tt.cacheStatus)
			}
			if len(dates) != 1 {
				t.Fatalf("Date lines %q, want exactly one", dates)
			}
			if tt.stored && dates[0] != past {
				t.Fatalf("Date %q, want the stored %q", dates[0], past)
			}
			if !tt.stored {
				d, err := http.ParseTime(dates[0])
				if err != nil || time.Since(d).Abs() > 5*time.Second {
					t.Fatalf("Date %q, want the current time", dates[0])
				}
			}
		})
	}
}

// The stored head writes the entry's Date and fields, and, when the
// origin sent no Date, the time the response arrived (RFC 9110 6.6.1).
func TestStoredHeadHoldsTheDate(t *testing.T) {
	stored := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := []struct {
		name, date, want string
	}{
		{name: "the origin's Date", date: "Tue, 03 Mar 2026 01:02:03 GMT", want: "Tue, 03 Mar 2026 01:02:03 GMT"},
		{name: "no Date: the time of arrival", want: "Wed, 04 Mar 2026 05:06:07 GMT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &cache.Entry{Date: []byte(tt.date), Stored: stored.UnixNano(),
				Header: []cache.Field{{Name: []byte("Cache-Control"), Value: []byte("max-age=60")}}}
			head := storedHead(e)
			if head == nil {
				t.Fatal("no head")
			}
			var h fasthttp.ResponseHeader
			head.CopyTo(&h)
			h.SetStatusCode(200)
			out := h.String()
			if n := strings.Count(out, "Date: "); n != 1 || !strings.Contains(out, "Date: "+tt.want+"\r\n") {
				t.Fatalf("header %q: want one Date: %s", out, tt.want)
			}
			if !strings.Contains(out, "Cache-Control: max-age=60\r\n") {
				t.Fatalf("header %q lost the stored field", out)
			}
		})
	}
}
