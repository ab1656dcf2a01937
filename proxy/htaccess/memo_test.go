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
