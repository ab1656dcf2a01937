package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Ranges are cut from whole bodies: from a stored entry on a hit, and from
// a relayed answer the cache does not keep (its fill asked for all of it).
func TestRangeRequestsAnsweredFromWholeBodies(t *testing.T) {
	body := strings.Repeat("0123456789", 100) // 1000 bytes
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" {
			t.Errorf("Range reached the origin on a fill: %q", r.Header.Get("Range"))
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		if strings.HasPrefix(r.URL.Path, "/nostore") {
			w.Header().Set("Cache-Control", "no-store")
		} else {
			w.Header().Set("Cache-Control", "max-age=60")
		}
		if strings.HasSuffix(r.URL.Path, "/big") { // streamed through, not buffered by the origin client
			w.Header().Set("Content-Length", "1000")
		}
		io.WriteString(w, body)
	})
	_, base := startProxy(t, testConfig(o.URL))
	get(t, base+"/stored") // the fill
	tests := []struct {
		name, path, rng, ifRange string
		status                   int
		want, contentRange       string
	}{
		{"hit: a middle span", "/stored", "bytes=10-19", "", 206, body[10:20], "bytes 10-19/1000"},
		{"hit: suffix", "/stored", "bytes=-5", "", 206, body[995:], "bytes 995-999/1000"},
		{"hit: past the end", "/stored", "bytes=1000-", "", 416, "", "bytes */1000"},
		{"hit: several ranges get the whole body", "/stored", "bytes=0-1,5-6", "", 200, body, ""},
		{"hit: If-Range with the ETag", "/stored", "bytes=0-4", `"v1"`, 206, body[:5], "bytes 0-4/1000"},
		{"hit: If-Range with another ETag gets the whole body", "/stored", "bytes=0-4", `"v0"`, 200, body, ""},
		{"hit: If-Range with the date", "/stored", "bytes=0-4", "Mon, 02 Jan 2006 15:04:05 GMT", 206, body[:5], "bytes 0-4/1000"},
		{"relay: a span", "/nostore", "bytes=100-199", "", 206, body[100:200], "bytes 100-199/1000"},
		{"relay: past the end", "/nostore", "bytes=5000-", "", 416, "", "bytes */1000"},
		{"relay of a stream: a span", "/nostore/big", "bytes=990-", "", 206, body[990:], "bytes 990-999/1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := []string{"Range", tt.rng}
			if tt.ifRange != "" {
				hdr = append(hdr, "If-Range", tt.ifRange)
			}
			r := get(t, base+tt.path, hdr...)
			if r.status != tt.status || r.body != tt.want || r.header.Get("Content-Range") != tt.contentRange {
				t.Fatalf("got %d %q (%d bytes) Content-Range %q; want %d %q Content-Range %q",
					r.status, r.body[:min(len(r.body), 20)], len(r.body), r.header.Get("Content-Range"), tt.status, tt.want[:min(len(tt.want), 20)], tt.contentRange)
			}
		})
	}
}
