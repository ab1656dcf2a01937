package htaccess

import (
	"path/filepath"
	"testing"
	"time"
)

// evalMemo is how the proxy uses the memo.
func evalMemo(tr *Tree, key uint64, r *Request, o *Outcome) {
	tok, ok := tr.Recall(key, o)
	if !ok {
		tr.Eval(r, o)
		tr.Remember(key, tok, o)
	}
}

func TestMemoRemembersALookupUntilAFileChanges(t *testing.T) {
	tr, c := wordpressTree(t, nil)
	r := request("GET /hello-world/", hdr{"User-Agent": "Android Mobile"})
	r.OneRound = true
	o := &Outcome{}
	evalMemo(tr, 1, r, o) // loads the files: what it stores is already stale
	evalMemo(tr, 1, r, o)
	if string(o.Cache.Vary) != "ismobile" {
		t.Fatalf("first: vary %q", o.Cache.Vary)
	}
	// The same key answers from the memo even for another request: the
	// key is the caller's promise that nothing the rules read differs.
	other := request("GET /hello-world/", hdr{"User-Agent": "Desktop"})
	other.OneRound = true
	evalMemo(tr, 1, other, o)
	if string(o.Cache.Vary) != "ismobile" {
		t.Fatalf("remembered: vary %q", o.Cache.Vary)
	}
	evalMemo(tr, 2, other, o)
	if string(o.Cache.Vary) != "webp" && string(o.Cache.Vary) != "" {
		t.Fatalf("other key: vary %q", o.Cache.Vary)
	}
	writeFile(t, filepath.Join(tr.Root(), ".htaccess"), "Require all denied\n")
	c.add(1100 * time.Millisecond)
	evalMemo(tr, 1, r, o)
	if o.Status != 403 {
		t.Fatalf("after the file changed: status %d, want 403", o.Status)
	}
}

func TestMemoIsOffForRulesThatReadTheClock(t *testing.T) {
	tr, _ := newTree(t, map[string]string{".htaccess": "RewriteEngine On\nRewriteCond %{TIME_HOUR} <12\nRewriteRule ^ - [F]\n"})
	r := request("GET /x", nil)
	r.OneRound = true
	evalMemo(tr, 7, r, &Outcome{})
	if !tr.memo.off.Load() {
		t.Fatal("a rule reading TIME_HOUR left the memo on")
	}
}

// evalServe is how the docroot uses the memo.
func evalServe(tr *Tree, key uint64, r *Request, o *Outcome) bool {
	tok, ok := tr.RecallServe(key, o)
	if !ok {
		tr.Eval(r, o)
		tr.RememberServe(key, tok, o)
	}
	return ok
}

func TestServeMemoRemembersTheWholeEvaluationUntilAFileChanges(t *testing.T) {
	tr, c := wordpressTree(t, nil)
	path := []byte("/hello-world/")
	r := request("GET /hello-world/?p=1", hdr{"Authorization": "Bearer xyz", "User-Agent": "Android Mobile"})
	r.Path = path
	var fresh, recalled Outcome
	evalServe(tr, 1, r, &fresh) // loads the files: what it stores is already stale
	evalServe(tr, 1, r, &fresh)
	copy(path, "/XXXXXXXXXXX/") // the request's bytes are not the memo's
	if !evalServe(tr, 1, r, &recalled) {
		t.Fatal("not recalled")
	}
	env := func(o *Outcome) map[string]string {
		m := map[string]string{}
		o.Env(func(n string, v []byte) { m[n] = string(v) })
		return m
	}
	if string(recalled.Path) != "/index.php" || string(recalled.Query) != "p=1" || !recalled.Rewritten ||
		recalled.Rounds() != fresh.Rounds() || !recalled.Configured() || string(recalled.Cache.Vary) != "ismobile" {
		t.Fatalf("recalled path %q query %q rewritten %v rounds %d vary %q", recalled.Path, recalled.Query, recalled.Rewritten, recalled.Rounds(), recalled.Cache.Vary)
	}
	if got, want := env(&recalled), env(&fresh); len(got) != len(want) || got["REDIRECT_HTTP_AUTHORIZATION"] != "Bearer xyz" {
		t.Fatalf("recalled env %v, evaluated %v", got, want)
	}
	if mt := recalled.MimeType("/a.woff2"); mt != fresh.MimeType("/a.woff2") {
		t.Fatalf("recalled type %q", mt)
	}
	writeFile(t, filepath.Join(tr.Root(), ".htaccess"), "Require all denied\n")
	c.add(1100 * time.Millisecond)
	if evalServe(tr, 1, r, &recalled) || recalled.Status != 403 {
		t.Fatalf("after the file changed: status %d, want 403 evaluated", recalled.Status)
	}
}

func TestServeMemoKeepsNoOutcomeWithCookies(t *testing.T) {
	tr, _ := newTree(t, map[string]string{".htaccess": "RewriteEngine On\nRewriteRule ^ - [CO=seen:1:example.com:60]\n"})
	r := request("GET /x", nil)
	o := &Outcome{}
	evalServe(tr, 3, r, o)
	evalServe(tr, 3, r, o)
	if len(o.Cookies()) != 1 {
		t.Fatalf("cookies %q", o.Cookies())
	}
	if evalServe(tr, 3, r, o) {
		t.Fatal("an outcome with a CO= cookie (its expiry counted from the request) was remembered")
	}
}

func TestTreesSharingAMemoNeverRecallEachOthersDecisions(t *testing.T) {
	m := NewMemo()
	c := newClock()
	open := c.cfg(writeTree(t, map[string]string{".htaccess": "Require all granted\n"}))
	open.Memo = m
	closed := c.cfg(writeTree(t, map[string]string{".htaccess": "Require all denied\n"}))
	closed.Memo = m
	a, err := NewTree(open)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewTree(closed)
	if err != nil {
		t.Fatal(err)
	}
	r := request("GET /wp-login.php", nil)
	r.OneRound = true
	for range 2 { // the first evaluation loads the files
		evalMemo(a, 42, r, &Outcome{})
		evalMemo(b, 42, r, &Outcome{})
	}
	for _, tc := range []struct {
		tr   *Tree
		want int
	}{{a, 0}, {b, 403}} {
		var o Outcome
		if _, ok := tc.tr.Recall(42, &o); !ok {
			t.Fatalf("tree %d: nothing remembered", tc.tr.memo.id)
		}
		if o.Status != tc.want {
			t.Fatalf("tree %d recalled status %d, want its own %d", tc.tr.memo.id, o.Status, tc.want)
		}
	}
}

func TestAMemoHoldsNoShardUntilSomethingIsRemembered(t *testing.T) {
	m := NewMemo()
	cfg := newClock().cfg(writeTree(t, map[string]string{".htaccess": "Require all granted\n"}))
	cfg.Memo = m
	tr, err := NewTree(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.Recall(1, &Outcome{}); ok {
		t.Fatal("an empty memo recalled a decision")
	}
	held := 0
	for i := range m.shards {
		if m.shards[i].Load() != nil || m.serve[i].Load() != nil {
			held++
		}
	}
	if held != 0 {
		t.Fatalf("%d shards allocated before anything was remembered", held)
	}
}
