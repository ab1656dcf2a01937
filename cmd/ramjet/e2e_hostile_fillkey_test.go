package main_test

// End-to-end tests of what a cache fill sends upstream (issue 27): a GET
// or HEAD with a body is passed with its body, never coalesced nor
// stored, over HTTP/1.1 and HTTP/2 alike; a fill carries no framing
// field of a body it does not send; and a fill asks for exactly the URL
// its cache key describes (tracking parameters dropped, unreserved
// escapes decoded), while a pass goes as the client sent it.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// bodyOrigin is a Go origin that notes when a request's header arrives,
// then reads its whole body and answers a cacheable echo-style body:
// "id: N" (one per answer) and "body: LEN" (what it read).
type bodyOrigin struct {
	*httptest.Server
	seq     atomic.Int64
	mu      sync.Mutex     // guards arrived
	arrived map[string]int // path -> requests whose header came
}

func startBodyOrigin(t *testing.T) *bodyOrigin {
	t.Helper()
	o := &bodyOrigin{arrived: map[string]int{}}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.arrived[r.URL.Path]++
		o.mu.Unlock()
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return // the upstream request went away
		}
		w.Header().Set("Cache-Control", "max-age=60")
		fmt.Fprintf(w, "id: %d\nbody: %d\ncontent-length: %s\n\n", o.seq.Add(1), len(b), r.Header.Get("Content-Length"))
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *bodyOrigin) arrivals(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.arrived[path]
}

const bypassSeries = `ramjet_requests_total{cache="bypass"}`

// TestGetWithBodyIsPassedAndStallsNobody: a GET with a body (declared,
// chunked, HTTP/2 DATA with or without a length; whole, or still on its
// way) is its own request upstream, with its body. A visitor of the same
// URL meanwhile is answered at once from a fill of its own. Before, the
// body's GET led a fill that declared the body without sending it: the
// origin waited for it until origin.header_timeout (30 s), and so did
// every request coalesced on the fill. Nothing of the body's answer is
// stored: the URL's entry stays the plain GET's.
func TestGetWithBodyIsPassedAndStallsNobody(t *testing.T) {
	o := startBodyOrigin(t)
	h2cAddr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	rj := startRamjet(t, o.URL, "--h2c-listen", h2cAddr)
	plain := newClient(t)
	plain.Timeout = 10 * time.Second // well under the 30 s a stalled fill holds its followers
	h1, h2 := newClient(t), h2cFrom(t, "127.0.0.1")
	tests := []struct {
		name   string
		client *http.Client
		base   string
		// slow: the body has no declared length (chunked over HTTP/1.1,
		// DATA over HTTP/2) and is sent only once the plain GET was
		// answered; else it is "hello" with its length (ramjet reads a
		// small declared body whole before it begins).
		slow bool
	}{
		{"HTTP/1.1 Content-Length", h1, rj.URL, false},
		{"HTTP/1.1 chunked, body still on its way", h1, rj.URL, true},
		{"HTTP/2 content-length", h2, "http://" + h2cAddr, false},
		{"HTTP/2 DATA without a length, still on its way", h2, "http://" + h2cAddr, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := fmt.Sprintf("/bodyget%d", i)
			bypassed := metricValue(t, rj.AdminURL, bypassSeries)
			pr, pw := io.Pipe()
			defer pw.CloseWithError(io.ErrUnexpectedEOF) // a failed test leaves the body unsent
			var body io.Reader = strings.NewReader("hello")
			if tt.slow {
				body = pr
			}
			type answer struct {
				r   result
				err error
			}
			done := make(chan answer, 1)
			go func() {
				r, err := tryDo(tt.client, http.MethodGet, tt.base+path, body)
				done <- answer{r, err}
			}()
			// The body's GET is in: passed (counted), or at the origin.
			if !testbed.Poll(10*time.Second, func() bool {
				return o.arrivals(path) > 0 || metricValue(t, rj.AdminURL, bypassSeries) > bypassed
			}) {
				t.Fatal("the GET with a body reached neither the pass nor the origin")
			}
			first, err := tryDo(plain, http.MethodGet, rj.URL+path, nil)
			if err != nil {
				t.Fatalf("a plain GET while another client's GET with a body is in: %v", err)
			}
			mustMissStored(t, first, "a plain GET while another client's GET with a body is in")
			if got := first.Echo()["body"]; got != "0" {
				t.Errorf("the plain GET's fill sent a body of %s bytes", got)
			}
			if tt.slow {
				io.WriteString(pw, "hello")
				pw.Close()
			}
			a := <-done
			if a.err != nil {
				t.Fatalf("the GET with a body: %v", a.err)
			}
			mustStatus(t, a.r, http.StatusOK, "the GET with a body")
			if cs := a.r.Header.Get("Cache-Status"); cs != "ramjet; fwd=bypass; detail=request-body" {
				t.Errorf("the GET with a body: Cache-Status %q, want ramjet; fwd=bypass; detail=request-body", cs)
			}
			if got := a.r.Echo()["body"]; got != "5" {
				t.Errorf("the origin read %s bytes of the GET's body, want 5", got)
			}
			again := get(t, plain, rj.URL+path)
			mustFreshHit(t, again, "a plain GET after the body's")
			if again.ID() != first.ID() {
				t.Errorf("the entry is answer %s, want the plain GET's %s", again.ID(), first.ID())
			}
		})
	}
}

// TestFragmentOfAPostedPageIsFilledWithoutItsBody: the fragments of an
// ESI page answered to a POST are GETs that carry nothing of the POST's
// body: before, they took its Content-Length along, and the origin
// waited for a body that never came until the fragment timed out.
func TestFragmentOfAPostedPageIsFilledWithoutItsBody(t *testing.T) {
	_, rj, c := setup(t, "")
	page := rj.URL + esiPage("", []string{incl("/esi/frag.php?name=postfrag&cc=public")})
	r, err := tryDo(c, http.MethodPost, page, strings.NewReader("comment=hello"), "Content-Type: application/x-www-form-urlencoded")
	if err != nil {
		t.Fatal(err)
	}
	mustIntactPage(t, r, 1, "POST of an ESI page")
	mustFrag(t, r, "postfrag", "the POSTed page's fragment")
}

// TestFillAsksForTheURLItsKeyDescribes: a fill sends the URL its cache key
// describes: tracking parameters and click IDs dropped, the rest in the
// key's order, unreserved escapes decoded, reserved ones kept (upper
// case). So a page that reflects a tracking parameter shows no visitor's
// value to the others, and the entry of /e/fwdkey-abc is what the origin
// answers for /e/fwdkey-abc, not for a spelling it may route elsewhere.
// A pass (POST) goes as the client sent it: nothing of it is stored.
func TestFillAsksForTheURLItsKeyDescribes(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	cc := hq("Cache-Control: max-age=60")
	alice := get(t, c, rj.URL+"/e/fwdkey-%61bc?utm_source=alice&b=2&gclid=g&"+cc+"&a=1&msclkid=m&_hsenc=h")
	mustMissStored(t, alice, "alice's visit")
	if got, want := alice.Echo()["uri"], "/e/fwdkey-abc?a=1&b=2&"+cc; got != want {
		t.Errorf("the fill asked for %q, want the key's URL %q", got, want)
	}
	bob := get(t, c, rj.URL+"/e/fwdkey-abc?"+cc+"&b=2&a=1&utm_source=bob&srsltid=s&ttclid=t")
	mustFreshHit(t, bob, "bob's visit of the same page")
	if bob.ID() != alice.ID() || strings.Contains(string(bob.Body), "alice") {
		t.Errorf("bob got answer %s (alice's is %s): %q", bob.ID(), alice.ID(), bob.Body)
	}
	for _, tt := range []struct{ name, target, want string }{
		{"reserved escape kept, upper-cased", "/e/fwdkey%2fx?" + cc, "/e/fwdkey%2Fx?" + cc},
		{"only tracking parameters: no query", "/e/fwdkey-q?utm_medium=x&wbraid=w&gbraid=g&mc_cid=c&mc_eid=e", "/e/fwdkey-q"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, c, rj.URL+tt.target)
			mustStatus(t, r, http.StatusOK, tt.target)
			if got := r.Echo()["uri"]; got != tt.want {
				t.Errorf("%s: the fill asked for %q, want %q", tt.target, got, tt.want)
			}
		})
	}
	post := do(t, c, http.MethodPost, rj.URL+"/e/fwdkey-%61bc?utm_source=carol&b=2")
	mustStatus(t, post, http.StatusOK, "POST")
	if got, want := post.Echo()["uri"], "/e/fwdkey-%61bc?utm_source=carol&b=2"; got != want {
		t.Errorf("the POST (a pass) reached the origin as %q, want it as sent, %q", got, want)
	}
}

// TestPHPIsAskedForTheURLTheKeyDescribes: in docroot mode the URL a fill
// hands PHP (REQUEST_URI, QUERY_STRING, $_GET) is the key's, as an
// origin's would be.
func TestPHPIsAskedForTheURLTheKeyDescribes(t *testing.T) {
	rj, root := startPHP(t, "")
	script := "<?php\nheader('Cache-Control: public, max-age=60');\n" +
		`echo "id: ", hrtime(true), "\nuri: ", $_SERVER['REQUEST_URI'], "\nquery: ", $_SERVER['QUERY_STRING'], "\nget: ", implode(',', array_keys($_GET)), "\n\n";` + "\n"
	if err := os.WriteFile(filepath.Join(root, "fillkey-uri.php"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	alice := get(t, c, rj.URL+"/fillkey-%75ri.php?utm_source=alice&b=2&fbclid=f&a=1")
	mustMissStored(t, alice, "alice's visit")
	want := map[string]string{"uri": "/fillkey-uri.php?a=1&b=2", "query": "a=1&b=2", "get": "a,b"}
	for k, v := range want {
		if got := alice.Echo()[k]; got != v {
			t.Errorf("PHP's %s: %q, want %q", k, got, v)
		}
	}
	bob := get(t, c, rj.URL+"/fillkey-uri.php?a=1&b=2&utm_source=bob")
	mustFreshHit(t, bob, "bob's visit")
	if bob.ID() != alice.ID() || strings.Contains(string(bob.Body), "alice") {
		t.Errorf("bob got %q, want alice's answer %s without her parameter", bob.Body, alice.ID())
	}
}

// TestGetWithBodyOverHTTP3IsPassed: over HTTP/3 as well, a GET with a
// declared body goes upstream with it, uncached (before, its fill
// declared the body without sending it and timed out).
func TestGetWithBodyOverHTTP3IsPassed(t *testing.T) {
	o := startBodyOrigin(t)
	rj := startH3Ramjet(t, newPKI(t), o.URL)
	c := rj.h3Client(t, nil)
	c.Timeout = 10 * time.Second
	u := rj.HTTPS("localhost", "/bodyget-h3")
	r, err := tryDo(c, http.MethodGet, u, strings.NewReader("hello"))
	if err != nil {
		t.Fatalf("GET with a body over HTTP/3: %v", err)
	}
	if cs := r.Header.Get("Cache-Status"); cs != "ramjet; fwd=bypass; detail=request-body" || r.Echo()["body"] != "5" {
		t.Fatalf("GET with a body over HTTP/3: Cache-Status %q, the origin read %s bytes; want a pass with the 5", cs, r.Echo()["body"])
	}
	mustMissStored(t, get(t, c, u), "a plain GET after it")
}
