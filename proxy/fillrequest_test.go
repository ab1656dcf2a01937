package proxy

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// A GET or HEAD with a body is passed with its body: the origin reads
// it, nothing is stored, and the next plain GET is a miss of its own.
func TestGetWithBodyIsPassedWithItsBody(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(w, "read "+strconv.Itoa(len(b)))
	})
	_, base := startProxy(t, testConfig(o.URL))
	tests := []struct {
		name   string
		method string
		length int64 // -1: chunked
		want   string
	}{
		{"GET Content-Length", http.MethodGet, 5, "read 5"},
		{"GET chunked", http.MethodGet, -1, "read 5"},
		{"HEAD Content-Length", http.MethodHead, 5, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := base + "/body" + strconv.Itoa(i)
			req, err := http.NewRequest(tt.method, u, io.MultiReader(strings.NewReader("hello")))
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = tt.length
			r := roundTrip(t, req)
			if r.cacheStatus != string(csBody) || r.body != tt.want {
				t.Fatalf("%s with a body: %q %q, want %q %q", tt.method, r.cacheStatus, r.body, csBody, tt.want)
			}
			if r := get(t, u); r.cacheStatus != string(csStored) || r.body != "read 0" {
				t.Fatalf("plain GET after: %q %q, want a miss of its own", r.cacheStatus, r.body)
			}
		})
	}
}

// The fragments of an ESI page answered to a POST are fetched without
// the POST's Content-Length: the origin would wait for a body that never
// comes.
func TestFragmentFillCarriesNoContentLength(t *testing.T) {
	var fragLength = make(chan string, 1)
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/frag" {
			fragLength <- r.Header.Get("Content-Length")
			w.Header().Set("Cache-Control", "max-age=60")
			io.WriteString(w, "fragment")
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Surrogate-Control", `content="ESI/1.0"`)
		io.WriteString(w, `<p><esi:include src="/frag"/></p>`)
	})
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	_, base := startProxy(t, cfg)
	resp, err := http.Post(base+"/page", "application/x-www-form-urlencoded", strings.NewReader("comment=hello"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "<p>fragment</p>" {
		t.Fatalf("POSTed page: %q, want its fragment assembled", b)
	}
	if cl := <-fragLength; cl != "" {
		t.Fatalf("the fragment's fill sent Content-Length %q", cl)
	}
}
