package proxy

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
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

// A fill asks for the URL its key describes; a pass for the one the
// client sent.
func TestFillSendsTheKeysTarget(t *testing.T) {
	var mu sync.Mutex
	var got []string
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.RequestURI)
		mu.Unlock()
		w.Header().Set("Cache-Control", "max-age=60")
	})
	_, base := startProxy(t, testConfig(o.URL))
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, err := http.NewRequest(method, base, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque, req.URL.RawQuery = "/a%62c%2fd", "utm_source=x&b=2&&a=1"
		roundTrip(t, req)
	}
	want := []string{"GET /abc%2Fd?a=1&b=2", "POST /a%62c%2fd?utm_source=x&b=2&&a=1"}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("origin saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The fragments of an ESI page answered to a POST are fetched without
// the POST's Content-Length: the origin would wait for a body that never
// comes.
func TestFragmentFillCarriesNoContentLength(t *testing.T) {
	fragLength := make(chan string, 1)
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

// What a fill sends is keyed as the request it was made for: a fill's
// target, asked for again, finds the same entry.
func FuzzKeyTargetKeysAlike(f *testing.F) {
	for _, s := range []string{"/", "/a%62c?b=2&utm_x=1&a=1", "/a%2fb?%41=1", "http://h/p?q#f", "/a?&&", "/%zz%4"} {
		f.Add(s)
	}
	drop := newPatterns([]string{"utm_*", "gclid"})
	key := func(uri string) (string, string) {
		r := &request{req: &fasthttp.Request{}}
		r.req.Header.SetRequestURI(uri)
		r.req.Header.SetHost("h")
		t := target{scheme: schemeHTTP, host: []byte("h")}
		t.path, t.query = splitTarget(r.req)
		r.setKey(&t, keyDrop{site: drop})
		return string(r.key), string(r.keyTarget())
	}
	f.Fuzz(func(t *testing.T, target string) {
		k, sent := key(target)
		if again, _ := key(sent); again != k {
			t.Fatalf("%q is keyed %q; the fill sends %q, keyed %q", target, k, sent, again)
		}
	})
}
