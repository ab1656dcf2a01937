package main_test

// End-to-end tests of Edge Side Includes and the private (per-user) cache:
// pages and fragments are PHP scripts under testdata/www/esi/ (page.php,
// frag.php and the small fragment scripts that set its defaults), served by
// the real nginx + php-fpm origin through the built binary.

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// Cookies of the users in these tests. "user" is echoed by the scripts, so
// whose content a block is shows in the body; sid makes it a session.
const (
	alice = "Cookie: user=alice; sid=a1"
	bob   = "Cookie: user=bob; sid=b2"
)

// esiPage returns the path and query of page.php in mode (esi=…, "" for
// the default LiteSpeed esi=on page) with markup as m1, m2, … and extra
// query parameters ("k=v" pairs, already encoded) appended.
func esiPage(mode string, markup []string, extra ...string) string {
	q := url.Values{}
	if mode != "" {
		q.Set("esi", mode)
	}
	for i, m := range markup {
		q.Set(fmt.Sprintf("m%d", i+1), m)
	}
	u := "/esi/page.php?" + q.Encode()
	for _, e := range extra {
		u += "&" + e
	}
	return u
}

// incl is an <esi:include> of src with extra attributes.
func incl(src string, attrs ...string) string {
	s := `<esi:include src="` + src + `"`
	for _, a := range attrs {
		s += " " + a
	}
	return s + " />"
}

// frag is one fragment block in an assembled page.
type frag struct {
	Name, ID, User, Auth, Get string
}

var fragRE = regexp.MustCompile(`\[frag name=(\S+) id=(\S+) user=(\S+) auth=(\S+) get=([^\]]*)\]`)

// frags returns the fragment blocks of body in order.
func frags(body []byte) []frag {
	var out []frag
	for _, m := range fragRE.FindAllSubmatch(body, -1) {
		out = append(out, frag{Name: string(m[1]), ID: string(m[2]), User: string(m[3]), Auth: string(m[4]), Get: string(m[5])})
	}
	return out
}

// fragsNamed returns the blocks of r named name.
func fragsNamed(r result, name string) []frag {
	var out []frag
	for _, f := range frags(r.Body) {
		if f.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// mustFrag fails unless r holds exactly one block named name, and returns it.
func mustFrag(t testing.TB, r result, name, what string) frag {
	t.Helper()
	fs := fragsNamed(r, name)
	if len(fs) != 1 {
		t.Fatalf("%s: %d fragment blocks named %q, want 1; blocks %+v; body %.600q", what, len(fs), name, frags(r.Body), r.Body)
	}
	return fs[0]
}

// mustNoFrag fails if r holds a block named name.
func mustNoFrag(t testing.TB, r result, name, what string) {
	t.Helper()
	if fs := fragsNamed(r, name); len(fs) != 0 {
		t.Fatalf("%s: fragment %q rendered %+v, want it absent", what, name, fs)
	}
}

// mustIntactPage fails unless r is a 200 page.php body with its start, the
// markers after m1..mN and its end (so nothing around the markup was lost).
func mustIntactPage(t testing.TB, r result, n int, what string) {
	t.Helper()
	mustStatus(t, r, http.StatusOK, what)
	if r.ID() == "" {
		t.Fatalf("%s: no page id in body %.300q", what, r.Body)
	}
	want := []string{"<p>page-start</p>", "<p>page-end</p></body></html>\n"}
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprintf("<p>after-m%d</p>", i))
	}
	for _, w := range want {
		if !strings.Contains(string(r.Body), w) {
			t.Fatalf("%s: body lacks %q (page damaged); %d bytes; start %.400q; end %q", what, w, len(r.Body), r.Body, tail(r.Body, 200))
		}
	}
	if !strings.HasSuffix(string(r.Body), "<p>page-end</p></body></html>\n") {
		t.Fatalf("%s: body does not end with the page end; end %q", what, tail(r.Body, 200))
	}
	if len(r.Body) < 30000 {
		t.Fatalf("%s: body %d bytes, want the 30 KB page", what, len(r.Body))
	}
}

// mustNoMarkup fails if ESI markup reached the client.
func mustNoMarkup(t testing.TB, r result, what string) {
	t.Helper()
	for _, m := range []string{"<esi:", "</esi:", "<!--esi"} {
		if i := strings.Index(string(r.Body), m); i >= 0 {
			t.Fatalf("%s: ESI markup %q reached the client: %q", what, m, r.Body[i:min(len(r.Body), i+200)])
		}
	}
}

func tail(b []byte, n int) []byte { return b[max(0, len(b)-n):] }

// mustPageHit fails unless r is a fresh hit of the page whose id is id.
func mustPageHit(t testing.TB, r result, id, what string) {
	t.Helper()
	mustFreshHit(t, r, what)
	if r.ID() != id {
		t.Fatalf("%s: page id %q, want the cached page %q", what, r.ID(), id)
	}
}

// ---------------------------------------------------------------------------

func TestESIPublicAndPrivateFragmentsPerUser(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	u := rj.URL + esiPage("", []string{
		incl("/esi/pub.php?name=a"),
		incl("/esi/pub.php?name=b"),
		incl("/esi/priv.php?name=p", `cache-control="private,no-vary"`),
	})

	var pageID, aID, bID string
	privIDs := map[string]string{} // user -> id of their private block
	users := []struct{ name, cookie string }{{"alice", alice}, {"bob", bob}}
	for i := range 6 {
		user := users[i%2]
		what := fmt.Sprintf("request %d (%s)", i+1, user.name)
		r := get(t, c, u, user.cookie)
		mustIntactPage(t, r, 3, what)
		mustNoMarkup(t, r, what)
		if i == 0 {
			mustMissStored(t, r, what)
			pageID = r.ID()
		} else {
			mustPageHit(t, r, pageID, what)
		}
		a, b, p := mustFrag(t, r, "a", what), mustFrag(t, r, "b", what), mustFrag(t, r, "p", what)
		if i == 0 {
			aID, bID = a.ID, b.ID
		}
		if a.ID != aID || b.ID != bID {
			t.Fatalf("%s: public fragments a=%s b=%s, want the shared a=%s b=%s", what, a.ID, b.ID, aID, bID)
		}
		if p.User != user.name {
			t.Fatalf("%s: private block belongs to user %q, want %q (%+v)", what, p.User, user.name, p)
		}
		if old, ok := privIDs[user.name]; ok && old != p.ID {
			t.Fatalf("%s: private block %s, want %s's cached block %s", what, p.ID, user.name, old)
		}
		privIDs[user.name] = p.ID
	}
	if privIDs["alice"] == privIDs["bob"] {
		t.Fatalf("alice and bob share the private block %s", privIDs["alice"])
	}
	if n := o.waitRequests(t, "/esi/page.php", 1); n != 1 {
		t.Errorf("origin saw %d page requests, want 1", n)
	}
	if n := o.waitRequests(t, "/esi/pub.php", 2); n != 2 {
		t.Errorf("origin saw %d public fragment requests for 6 pages of 2 users, want 2 (a and b once each)", n)
	}
	if n := o.waitRequests(t, "/esi/priv.php", 2); n != 2 {
		t.Errorf("origin saw %d private fragment requests, want 2 (one per user)", n)
	}

	t.Run("concurrent users see only their own block", func(t *testing.T) {
		const workers, rounds = 8, 5
		var wg sync.WaitGroup
		errs := make(chan string, workers*rounds)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				user := users[w%2]
				for range rounds {
					r, err := tryDo(c, http.MethodGet, u, nil, user.cookie)
					if err != nil {
						errs <- err.Error()
						return
					}
					var got []string
					for _, f := range frags(r.Body) {
						got = append(got, f.Name+"="+f.ID+"/"+f.User)
					}
					want := []string{"a=" + aID + "/alice", "b=" + bID + "/alice", "p=" + privIDs[user.name] + "/" + user.name}
					if r.Status != http.StatusOK || strings.Join(got, " ") != strings.Join(want, " ") {
						errs <- fmt.Sprintf("%s: status %d blocks %q, want %q", user.name, r.Status, got, want)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		n := 0
		for e := range errs {
			if n++; n <= 5 {
				t.Error(e)
			}
		}
	})

	t.Run("identity ignores analytics cookies", func(t *testing.T) {
		r := get(t, c, u, "Cookie: _ga=GA1.2.3; sid=a1; __utmz=1; user=alice; wordpress_test_cookie=WP")
		mustStatus(t, r, http.StatusOK, "alice with analytics cookies")
		if p := mustFrag(t, r, "p", "alice with _ga"); p.ID != privIDs["alice"] || p.User != "alice" {
			t.Errorf("alice with a _ga cookie: private block %+v, want alice's cached %s", p, privIDs["alice"])
		}
	})

	t.Run("no session cookie, no private caching", func(t *testing.T) {
		before := o.loggedRequests(t, "/esi/priv.php")
		seen := map[string]bool{}
		for i, hdr := range [][]string{nil, nil, {"Cookie: _ga=GA1.2.3; __utma=1"}, {"Cookie: _ga=GA1.2.3; __utma=1"}} {
			what := fmt.Sprintf("anonymous request %d", i+1)
			r := get(t, c, u, hdr...)
			mustIntactPage(t, r, 3, what)
			mustPageHit(t, r, pageID, what)
			p := mustFrag(t, r, "p", what)
			if p.User != "-" {
				t.Fatalf("%s: private block of user %q", what, p.User)
			}
			if p.ID == privIDs["alice"] || p.ID == privIDs["bob"] || seen[p.ID] {
				t.Fatalf("%s: private block %s was served from a cache (alice %s, bob %s)", what, p.ID, privIDs["alice"], privIDs["bob"])
			}
			seen[p.ID] = true
		}
		if n := o.waitRequests(t, "/esi/priv.php", before+4); n != before+4 {
			t.Errorf("origin saw %d private fragment requests for 4 anonymous pages, want 4", n-before)
		}
	})
	if n := o.waitRequests(t, "/esi/pub.php", 2); n != 2 {
		t.Errorf("origin saw %d public fragment requests in all, want 2", n)
	}
}

func TestESIMarkupForms(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	tests := []struct {
		name    string
		markup  string
		frag    string // block expected in its place
		get     string // its get= must contain this
		without string // text that must be gone
	}{
		{"double-quoted", `<esi:include src="/esi/pub.php?name=dq"/>`, "dq", "name=dq", ""},
		{"single-quoted", `<esi:include src='/esi/pub.php?name=sq' />`, "sq", "name=sq", ""},
		{"amp-entity", `<esi:include src="/esi/pub.php?name=amp&amp;x=1" />`, "amp", "name=amp;x=1", ""},
		{"numeric-entity", `<esi:include src='/esi/pub.php?name=num&#038;x=2' />`, "num", "name=num;x=2", ""},
		{"relative-src", `<esi:include src="pub.php?name=rel"/>`, "rel", "name=rel", ""},
		{"with-close-tag", `<esi:include src="/esi/pub.php?name=closed"></esi:include>`, "closed", "name=closed", ""},
		{"remove", `<esi:remove><p>removed-text</p></esi:remove>`, "", "", "removed-text"},
		{"comment", `<esi:comment text="comment-text"/>`, "", "", "comment-text"},
		{"esi-comment", `<!--esi <p>inner-esi-text</p>` + incl("/esi/pub.php?name=inesi") + ` -->`, "inesi", "name=inesi", ""},
		{"surrounding-text", `<b>before-include</b>` + incl("/esi/pub.php?name=sur") + `<b>after-include</b>`, "sur", "name=sur", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := rj.URL + esiPage("", []string{tt.markup}, "case="+tt.name)
			for i, what := range []string{"miss", "hit"} {
				r := get(t, c, u)
				mustIntactPage(t, r, 1, what)
				mustNoMarkup(t, r, what)
				if i == 1 {
					mustFreshHit(t, r, what)
				}
				if tt.frag != "" {
					f := mustFrag(t, r, tt.frag, what)
					if !strings.Contains(f.Get, tt.get) {
						t.Errorf("%s: fragment saw query %q, want it to contain %q", what, f.Get, tt.get)
					}
					// The block sits where the markup was.
					if !regexp.MustCompile(`\[frag name=` + regexp.QuoteMeta(tt.frag) + ` [^\]]*\]\s*(<b>after-include</b>)?<p>after-m1</p>`).Match(r.Body) {
						t.Errorf("%s: fragment block not in the include's place: %q", what, r.Body[:min(len(r.Body), 500)])
					}
				}
				if tt.without != "" && strings.Contains(string(r.Body), tt.without) {
					t.Errorf("%s: %q still in the page", what, tt.without)
				}
			}
			switch tt.name {
			case "esi-comment":
				r := get(t, c, u)
				if !strings.Contains(string(r.Body), "<p>inner-esi-text</p>") {
					t.Errorf("<!--esi … -->: inner content dropped: %q", r.Body[:min(len(r.Body), 500)])
				}
			case "surrounding-text":
				r := get(t, c, u)
				if !regexp.MustCompile(`<b>before-include</b>\[frag name=sur [^\]]*\]<b>after-include</b>`).Match(r.Body) {
					t.Errorf("text around the include changed: %q", r.Body[:min(len(r.Body), 500)])
				}
			}
		})
	}
}

func TestESIProcessingSwitch(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	on := startRamjet(t, o.URL)
	off := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "defaults:\n  esi: false\n"))
	hostOff := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "hosts:\n  - names: [\"esi-off.test\"]\n    esi: false\n"))
	c := newClient(t)
	markup := []string{
		`<esi:include src="/esi/pub.php?name=sw" />`,
		`<esi:remove><p>removed-text</p></esi:remove>`,
	}
	tests := []struct {
		name      string
		rj        *testbed.Ramjet
		mode      string
		host      string
		processed bool
	}{
		{"litespeed-esi-on", on, "ls", "", true},
		{"surrogate-control-esi", on, "surrogate", "", true},
		{"no-esi-header-not-scanned", on, "none", "", false},
		{"defaults-esi-false-litespeed", off, "ls", "", false},
		{"defaults-esi-false-surrogate", off, "surrogate", "", false},
		{"host-esi-false", hostOff, "ls", "esi-off.test", false},
		{"other-host-esi-on", hostOff, "ls", "esi-on.test", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hdr []string
			if tt.host != "" {
				hdr = append(hdr, "Host: "+tt.host)
			}
			u := tt.rj.URL + esiPage(tt.mode, markup, "case="+tt.name)
			before := o.loggedRequests(t, "/esi/pub.php") // earlier cases' fragments included
			var id string
			for i, what := range []string{"miss", "hit"} {
				r := get(t, c, u, hdr...)
				mustIntactPage(t, r, 2, what)
				if i == 0 {
					mustMissStored(t, r, what)
					id = r.ID()
				} else {
					mustPageHit(t, r, id, what)
				}
				if tt.processed {
					mustNoMarkup(t, r, what)
					mustFrag(t, r, "sw", what)
					if strings.Contains(string(r.Body), "removed-text") {
						t.Fatalf("%s: <esi:remove> content kept", what)
					}
					continue
				}
				for _, m := range markup {
					if !strings.Contains(string(r.Body), m) {
						t.Fatalf("%s: markup %q not passed through as is; body %.500q", what, m, r.Body)
					}
				}
				mustNoFrag(t, r, "sw", what)
			}
			if !tt.processed {
				// A stray fragment request is counted: ramjet would have
				// fetched it before answering the page.
				if n := o.loggedRequests(t, "/esi/pub.php"); n != before {
					t.Errorf("origin saw %d fragment requests for a page that is not processed", n-before)
				}
			}
		})
	}
}

func TestESINestedIncludes(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	tests := []struct {
		name    string
		config  string
		to      int // chain nest1 -> nest2 -> … -> nest<to>
		deepest int // deepest level rendered
	}{
		{"default-depth-3", "", 6, 3},
		{"chain-within-depth", "", 2, 2},
		{"max-depth-1", "esi:\n  max_depth: 1\n", 4, 1},
		{"max-depth-5", "esi:\n  max_depth: 5\n", 8, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var args []string
			if tt.config != "" {
				args = []string{"--config", testbed.WriteConfig(t, "", tt.config)}
			}
			rj := startRamjet(t, o.URL, args...)
			c := newClient(t)
			u := rj.URL + esiPage("", []string{incl(fmt.Sprintf("/esi/nest.php?d=1&amp;to=%d", tt.to))}, "case="+tt.name)
			for _, what := range []string{"miss", "hit"} {
				r := get(t, c, u)
				mustIntactPage(t, r, 1, what)
				mustNoMarkup(t, r, what)
				var names []string
				for _, f := range frags(r.Body) {
					names = append(names, f.Name)
				}
				var want []string
				for d := 1; d <= tt.deepest; d++ {
					want = append(want, fmt.Sprintf("nest%d", d))
				}
				if strings.Join(names, ",") != strings.Join(want, ",") {
					t.Fatalf("%s: rendered levels %q, want %q", what, names, want)
				}
			}
		})
	}
}

func TestESIAltAndOnError(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	tests := []struct {
		name   string
		markup string
		want   string // block rendered in place, "" for an empty block
		absent []string
	}{
		{"failing-src-uses-alt", incl("/esi/fail.php?k=1", `alt="/esi/alt.php?k=1"`), "alt", []string{"fail"}},
		{"failing-src-onerror-continue", incl("/esi/fail.php?k=2", `onerror="continue"`), "", []string{"fail"}},
		{"failing-src-alt-and-onerror", incl("/esi/fail.php?k=3", `alt="/esi/alt.php?k=3"`, `onerror="continue"`), "alt", []string{"fail"}},
		{"failing-src-nothing-else", incl("/esi/fail.php?k=4"), "", []string{"fail"}},
		{"failing-src-failing-alt", incl("/esi/fail.php?k=5", `alt="/esi/fail.php?k=5alt"`, `onerror="continue"`), "", []string{"fail"}},
		{"missing-src-uses-alt", incl("/esi/missing-fragment.php", `alt="/esi/alt.php?k=6"`), "alt", nil},
		{"good-src-ignores-alt", incl("/esi/pub.php?name=good", `alt="/esi/alt.php?k=7"`), "good", []string{"alt"}},
		{"foreign-host-refused-uses-alt", incl("http://example.invalid/esi/pub.php?name=foreign", `alt="/esi/alt.php?k=8"`), "alt", []string{"foreign"}},
		{"foreign-host-refused", incl("http://127.0.0.2:1/esi/pub.php?name=foreign2", `onerror="continue"`), "", []string{"foreign2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := rj.URL + esiPage("", []string{`<b>before</b>` + tt.markup + `<b>after</b>`, incl("/esi/pub.php?name=other")}, "case="+tt.name)
			for i, what := range []string{"miss", "hit"} {
				r := get(t, c, u)
				mustIntactPage(t, r, 2, what)
				mustNoMarkup(t, r, what)
				if i == 0 {
					mustMissStored(t, r, what+" (the page is stored whatever its fragments do)")
				} else {
					mustFreshHit(t, r, what+" (Cache-Status reflects the page)")
				}
				mustFrag(t, r, "other", what)
				for _, a := range tt.absent {
					mustNoFrag(t, r, a, what)
				}
				re := `<b>before</b><b>after</b>`
				if tt.want != "" {
					mustFrag(t, r, tt.want, what)
					re = `<b>before</b>\[frag name=` + tt.want + ` [^\]]*\]<b>after</b>`
				}
				if !regexp.MustCompile(re).Match(r.Body) {
					t.Fatalf("%s: want %s in place of the include; body %.500q", what, re, r.Body)
				}
			}
		})
	}
	if !rj.Alive() {
		t.Fatal("ramjet died")
	}
}

func TestESISlowFragmentTimeout(t *testing.T) {
	t.Parallel()
	const (
		timeout = 500 * time.Millisecond
		sleep   = 2500 // ms the slow fragment takes
		slack   = time.Second
	)
	tests := []struct {
		name   string
		markup string
		want   string // block in place of the slow include, "" for empty
	}{
		{"empty-block", incl(fmt.Sprintf("/esi/slow.php?sleep_ms=%d", sleep)), ""},
		{"alt", incl(fmt.Sprintf("/esi/slow.php?sleep_ms=%d", sleep), `alt="/esi/alt.php"`), "alt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Each case has its own origin: slow requests hold php-fpm children.
			_, rj, c := setup(t, "esi:\n  timeout: 500ms\n")
			u := rj.URL + esiPage("", []string{`<b>before</b>` + tt.markup + `<b>after</b>`, incl("/esi/pub.php?name=fast")})
			for i, what := range []string{"miss", "hit"} {
				start := time.Now()
				r := get(t, c, u)
				el := time.Since(start)
				mustIntactPage(t, r, 2, what)
				mustNoMarkup(t, r, what)
				if i == 1 {
					mustFreshHit(t, r, what+" (Cache-Status reflects the page, not its slow fragment)")
				}
				if el > timeout+slack {
					t.Errorf("%s: page took %v, want at most the %v fragment timeout + %v", what, el, timeout, slack)
				}
				mustFrag(t, r, "fast", what)
				mustNoFrag(t, r, "slow", what)
				re := `<b>before</b><b>after</b>`
				if tt.want != "" {
					re = `<b>before</b>\[frag name=` + tt.want + ` [^\]]*\]<b>after</b>`
				}
				if !regexp.MustCompile(re).Match(r.Body) {
					t.Fatalf("%s: want %s in place of the slow include; body %.500q", what, re, r.Body)
				}
			}
			// ramjet still answers at once.
			start := time.Now()
			mustStatus(t, get(t, c, rj.URL+"/static/page725.html"), http.StatusOK, "static page after timeouts")
			if el := time.Since(start); el > slack {
				t.Errorf("static page after fragment timeouts took %v", el)
			}
		})
	}
}

func TestESIFragmentTagPurgeRefreshesFragmentNotPage(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	fa, fb := incl("/esi/pub.php?name=a"), incl("/esi/pub.php?name=b")
	pages := []string{
		rj.URL + esiPage("", []string{fa, fb}, "tag=page-one"),
		rj.URL + esiPage("", []string{fb, fa}, "tag=page-two"),
	}
	pageIDs := make([]string, len(pages))
	load := func(what string) (a, b string) {
		t.Helper()
		for i, u := range pages {
			r := get(t, c, u)
			w := fmt.Sprintf("%s, page %d", what, i+1)
			mustIntactPage(t, r, 2, w)
			if pageIDs[i] == "" {
				mustMissStored(t, r, w)
				pageIDs[i] = r.ID()
			} else {
				mustPageHit(t, r, pageIDs[i], w+" (a fragment purge must not purge the page)")
			}
			fa, fb := mustFrag(t, r, "a", w), mustFrag(t, r, "b", w)
			if i == 0 {
				a, b = fa.ID, fb.ID
			} else if fa.ID != a || fb.ID != b {
				t.Fatalf("%s: fragments a=%s b=%s, want the ones page 1 showed a=%s b=%s", w, fa.ID, fb.ID, a, b)
			}
		}
		return a, b
	}
	a0, b0 := load("first load")
	if a1, b1 := load("second load"); a1 != a0 || b1 != b0 {
		t.Fatalf("fragments changed without a purge: a %s->%s b %s->%s", a0, a1, b0, b1)
	}
	if n := o.waitRequests(t, "/esi/pub.php", 2); n != 2 {
		t.Fatalf("origin saw %d fragment requests for two pages, want 2", n)
	}

	// Admin purge of tag frag-a.
	r := adminPost(t, c, rj, "tag=frag-a", "", "")
	mustStatus(t, r, http.StatusOK, "POST /purge?tag=frag-a")
	if a := decodeAnswer(t, r, "POST /purge?tag=frag-a"); a.Purged.Tags != 1 {
		t.Errorf("POST /purge?tag=frag-a answered %+v, want one tag", a)
	}
	a2, b2 := load("after admin purge of frag-a")
	if a2 == a0 {
		t.Errorf("after purging frag-a, pages still show fragment a %s", a0)
	}
	if b2 != b0 {
		t.Errorf("after purging frag-a, fragment b changed %s -> %s", b0, b2)
	}
	if n := o.waitRequests(t, "/esi/pub.php", 3); n != 3 {
		t.Errorf("origin saw %d fragment requests, want 3 (a refetched once for both pages)", n)
	}

	// X-LiteSpeed-Purge: frag-b on an unrelated origin response.
	purger := get(t, c, rj.URL+"/esi/frag.php?purge=frag-b")
	mustStatus(t, purger, http.StatusOK, "purging response")
	if v := purger.Header.Values("X-LiteSpeed-Purge"); len(v) > 0 {
		t.Errorf("X-LiteSpeed-Purge %q reached the client", v)
	}
	a3, b3 := load("after X-LiteSpeed-Purge: frag-b")
	if b3 == b2 {
		t.Errorf("after X-LiteSpeed-Purge: frag-b, pages still show fragment b %s", b2)
	}
	if a3 != a2 {
		t.Errorf("after purging frag-b, fragment a changed %s -> %s", a2, a3)
	}
	if n := o.waitRequests(t, "/esi/pub.php", 4); n != 4 {
		t.Errorf("origin saw %d fragment requests, want 4", n)
	}
	if n := o.waitRequests(t, "/esi/page.php", 2); n != 2 {
		t.Errorf("origin saw %d page requests, want 2: fragment purges must not purge pages", n)
	}

	// Purging the page's own tag does purge the page.
	r = adminPost(t, c, rj, "tag=page-one", "", "")
	mustStatus(t, r, http.StatusOK, "POST /purge?tag=page-one")
	p := get(t, c, pages[0])
	mustMissStored(t, p, "page one after purging its tag")
	if f := mustFrag(t, p, "a", "page one after its purge"); f.ID != a3 {
		t.Errorf("page one after its purge: fragment a %s, want the cached %s", f.ID, a3)
	}
}

func TestESILiteSpeedPluginMarkup(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	const bar = `<!-- lscwp admin-bar --><esi:include src='/esi/bar.php?lsesi=admin-bar&#038;_control=private,no-vary&#038;_hash=abc' cache-control='private,no-vary' as-var='1' /><!-- lscwp admin-bar esi end -->`
	u := rj.URL + esiPage("", []string{bar, incl("/esi/pub.php?name=a")})
	re := regexp.MustCompile(`<!-- lscwp admin-bar -->(\[frag name=admin-bar [^\]]*\])<!-- lscwp admin-bar esi end -->`)
	ids := map[string]string{}
	for i, user := range []struct{ name, cookie string }{{"alice", alice}, {"bob", bob}, {"alice", alice}, {"bob", bob}} {
		what := fmt.Sprintf("request %d (%s)", i+1, user.name)
		r := get(t, c, u, user.cookie)
		mustIntactPage(t, r, 2, what)
		mustNoMarkup(t, r, what)
		if i > 0 {
			mustFreshHit(t, r, what)
		}
		m := re.FindSubmatch(r.Body)
		if m == nil {
			t.Fatalf("%s: admin bar not rendered between the lscwp comments; body %.600q", what, r.Body)
		}
		f := frags(m[1])[0]
		if f.User != user.name {
			t.Fatalf("%s: admin bar of user %q", what, f.User)
		}
		if f.Get != "_control=private,no-vary;_hash=abc;lsesi=admin-bar" {
			t.Errorf("%s: bar.php saw query %q, want _control=private,no-vary;_hash=abc;lsesi=admin-bar (&#038; decoded)", what, f.Get)
		}
		if old, ok := ids[user.name]; ok && old != f.ID {
			t.Errorf("%s: admin bar %s, want %s's cached %s", what, f.ID, user.name, old)
		}
		ids[user.name] = f.ID
	}
	if ids["alice"] == ids["bob"] {
		t.Errorf("alice and bob share the admin bar %s", ids["alice"])
	}
	if n := o.waitRequests(t, "/esi/bar.php", 2); n != 2 {
		t.Errorf("origin saw %d admin bar requests for 4 pages of 2 users, want 2", n)
	}
}

func TestESIMalformedMarkupNeverBreaksPage(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	good := incl("/esi/pub.php?name=good")
	tests := []struct {
		name   string
		markup string
		extra  string
		check  func(t *testing.T, r result)
		noGood bool // the valid include is beyond max_includes
	}{
		{name: "unterminated-include", markup: `<esi:include src="/esi/pub.php?name=unterm"`},
		{name: "unterminated-quote", markup: `x<esi:include src="/x`},
		{name: "unknown-element", markup: `<esi:foo bar="1">inner-foo</esi:foo>`},
		{name: "unknown-self-closing", markup: `<esi:vars/>`},
		{name: "include-without-src", markup: `<esi:include alt="/esi/alt.php?k=nosrc" />`},
		{name: "include-empty-src", markup: `<esi:include src="" />`},
		{name: "unterminated-remove", markup: `<esi:remove><p>in-remove</p>`},
		{name: "stray-close", markup: `</esi:remove></esi:include>`},
		{name: "unterminated-esi-comment", markup: `<!--esi <p>in-comment</p>`},
		{name: "lt-in-src", markup: `<esi:include src="/esi/<pub.php?name=lt" />`},
		{name: "unbalanced-quotes", markup: `<esi:include src="/esi/pub.php?name=q' />`},
		{name: "garbage-attrs", markup: `<esi:include src=/esi/pub.php?name=bare ==="" "x" />`},
		{name: "bad-entity", markup: `<esi:include src="/esi/pub.php?name=ent&#99999999999;&#x;&bogus;" />`},
		{name: "nul-and-binary", markup: "<esi:include src=\"/esi/pub.php?name=bin\x00\x01\xff\" />"},
		{name: "long-attribute", extra: "gen=longattr"},
		{name: "long-tag", extra: "gen=longtag"},
		{name: "runaway-nesting", markup: incl("/esi/nest.php?d=1&amp;to=1000")},
		{name: "many-includes", markup: incl("/esi/pub.php?name=many"), extra: "rep1=70", noGood: true, check: func(t *testing.T, r result) {
			if n := len(fragsNamed(r, "many")); n != 64 {
				t.Errorf("70 includes rendered %d blocks, want the max_includes default 64", n)
			}
			mustNoFrag(t, r, "good", "the 71st include")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := rj.URL + esiPage("", []string{tt.markup, good}, "case="+tt.name)
			if tt.extra != "" {
				u += "&" + tt.extra
			}
			for i, what := range []string{"miss", "hit"} {
				start := time.Now()
				r := get(t, c, u)
				if el := time.Since(start); el > 5*time.Second {
					t.Errorf("%s: took %v", what, el)
				}
				mustIntactPage(t, r, 2, what)
				if i == 1 {
					mustFreshHit(t, r, what)
				}
				if !tt.noGood {
					mustFrag(t, r, "good", what+": a valid include after the malformed markup")
				}
				if strings.Contains(tt.extra, "gen=") && !strings.Contains(string(r.Body), "<p>after-gen</p>") {
					t.Fatalf("%s: text after the generated markup lost", what)
				}
				if tt.check != nil {
					tt.check(t, r)
				}
			}
		})
	}
	if !rj.Alive() {
		t.Fatal("ramjet died")
	}
	mustStatus(t, get(t, c, rj.URL+"/static/page725.html"), http.StatusOK, "static page after malformed markup")
}

func TestPrivatePagePerUserAndPurgeScope(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	priv := rj.URL + esiPage("private", nil)
	pub := rj.URL + esiPage("", []string{incl("/esi/priv.php?name=p", `cache-control="private,no-vary"`)})

	type state struct{ page, frag string }
	st := map[string]state{}
	users := []struct{ name, cookie string }{{"alice", alice}, {"bob", bob}}
	var pubID string
	for _, user := range users {
		first := get(t, c, priv, user.cookie)
		mustStatus(t, first, http.StatusOK, user.name+" first")
		if cs := first.CacheStatus(); cs.Hit {
			t.Fatalf("%s first request for the private page: Cache-Status %q, want a miss", user.name, cs.Raw)
		}
		if got := first.Echo()["user"]; got != user.name {
			t.Fatalf("%s first request: page of user %q", user.name, got)
		}
		second := get(t, c, priv, user.cookie)
		mustStatus(t, second, http.StatusOK, user.name+" second")
		if cs := second.CacheStatus(); cs.Raw != "ramjet; hit; detail=private" {
			t.Fatalf("%s second request: Cache-Status %q, want ramjet; hit; detail=private", user.name, cs.Raw)
		}
		if second.ID() != first.ID() || second.Echo()["user"] != user.name {
			t.Fatalf("%s second request: page %s of user %q, want their cached %s", user.name, second.ID(), second.Echo()["user"], first.ID())
		}
		for _, other := range st {
			if other.page == first.ID() {
				t.Fatalf("%s was served another user's private page", user.name)
			}
		}
		p := get(t, c, pub, user.cookie)
		mustIntactPage(t, p, 1, user.name+" ESI page")
		if pubID == "" {
			pubID = p.ID()
		}
		f := mustFrag(t, p, "p", user.name+" ESI page")
		if f.User != user.name {
			t.Fatalf("%s ESI page: private block of user %q", user.name, f.User)
		}
		st[user.name] = state{page: first.ID(), frag: f.ID}
	}
	if n := o.waitRequests(t, "/esi/page.php", 3); n != 3 {
		t.Errorf("origin saw %d page requests, want 3 (a private page per user, one public page)", n)
	}

	t.Run("no session, no private caching", func(t *testing.T) {
		before := o.loggedRequests(t, "/esi/page.php")
		ids := map[string]bool{}
		for i, hdr := range [][]string{nil, nil, {"Cookie: _ga=GA1.2.3"}, {"Cookie: _ga=GA1.2.3"}} {
			r := get(t, c, priv, hdr...)
			mustStatus(t, r, http.StatusOK, "anonymous")
			if cs := r.CacheStatus(); cs.Hit {
				t.Errorf("anonymous request %d: Cache-Status %q, want no hit", i+1, cs.Raw)
			}
			if r.ID() == st["alice"].page || r.ID() == st["bob"].page || ids[r.ID()] {
				t.Fatalf("anonymous request %d was served a cached private page", i+1)
			}
			ids[r.ID()] = true
		}
		if n := o.waitRequests(t, "/esi/page.php", before+4); n != before+4 {
			t.Errorf("origin saw %d requests for 4 anonymous private pages, want 4", n-before)
		}
	})

	// X-LiteSpeed-Purge: private, * on a response to alice purges hers only.
	purger := get(t, c, rj.URL+"/esi/frag.php?purge="+url.QueryEscape("private, *"), alice)
	mustStatus(t, purger, http.StatusOK, "alice's purging response")

	a := get(t, c, priv, alice)
	mustStatus(t, a, http.StatusOK, "alice after her private purge")
	if cs := a.CacheStatus(); cs.Hit || a.ID() == st["alice"].page {
		t.Errorf("alice after X-LiteSpeed-Purge: private, *: Cache-Status %q id %s, want a miss with a new page (old %s)", cs.Raw, a.ID(), st["alice"].page)
	}
	if a.Echo()["user"] != "alice" {
		t.Errorf("alice after purge got the page of %q", a.Echo()["user"])
	}
	ap := get(t, c, pub, alice)
	mustPageHit(t, ap, pubID, "alice's public ESI page after her private purge")
	if f := mustFrag(t, ap, "p", "alice's ESI page after purge"); f.ID == st["alice"].frag || f.User != "alice" {
		t.Errorf("alice's private fragment after her private purge: %+v, want a new block (old %s)", f, st["alice"].frag)
	}

	b := get(t, c, priv, bob)
	if cs := b.CacheStatus(); cs.Raw != "ramjet; hit; detail=private" || b.ID() != st["bob"].page {
		t.Errorf("bob after alice's private purge: Cache-Status %q id %s, want his cached %s as ramjet; hit; detail=private", cs.Raw, b.ID(), st["bob"].page)
	}
	bp := get(t, c, pub, bob)
	mustPageHit(t, bp, pubID, "bob's public ESI page after alice's purge")
	if f := mustFrag(t, bp, "p", "bob's ESI page"); f.ID != st["bob"].frag {
		t.Errorf("bob's private fragment after alice's private purge: %s, want his cached %s", f.ID, st["bob"].frag)
	}
}

// Pages that are not served from the shared cache (a bypass cookie,
// credentials, a no-cache or private response) are still assembled when
// their response asks for ESI, and the page request's Cookie and
// Authorization reach the same-host fragments.
func TestESIUncachedPagesAreAssembled(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	markup := []string{
		incl("/esi/pub.php?name=a"),
		incl("/esi/priv.php?name=p", `cache-control="private,no-vary"`),
	}
	tests := []struct {
		name     string
		mode     string
		hdr      []string
		user     string // user the private block must show
		auth     string // Authorization the fragments must see ("-" none)
		twiceHit string // Cache-Status of a repeated request, "" to skip
	}{
		{"wordpress-logged-in-bypass", "", []string{"Cookie: wordpress_logged_in_abc=admin%7C1; user=alice"}, "alice", "-", ""},
		{"authorization", "", []string{"Authorization: Basic dXNlcjpwYXNz"}, "-", "Basic_dXNlcjpwYXNz", ""},
		{"no-cache-page", "nocache-esi", []string{alice}, "alice", "-", ""},
		{"private-page", "private-esi", []string{alice}, "alice", "-", "ramjet; hit; detail=private"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := rj.URL + esiPage(tt.mode, markup, "case="+tt.name)
			n := 1
			if tt.twiceHit != "" {
				n = 2
			}
			for i := range n {
				what := fmt.Sprintf("request %d", i+1)
				r := get(t, c, u, tt.hdr...)
				mustIntactPage(t, r, 2, what)
				mustNoMarkup(t, r, what)
				if i == 1 {
					if cs := r.CacheStatus(); cs.Raw != tt.twiceHit {
						t.Errorf("%s: Cache-Status %q, want %q", what, cs.Raw, tt.twiceHit)
					}
				}
				mustFrag(t, r, "a", what)
				p := mustFrag(t, r, "p", what)
				if p.User != tt.user || p.Auth != tt.auth {
					t.Errorf("%s: private fragment saw user %q Authorization %q, want %q %q", what, p.User, p.Auth, tt.user, tt.auth)
				}
			}
		})
	}
}
