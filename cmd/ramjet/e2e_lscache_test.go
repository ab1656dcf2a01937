package main_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStockLSCachePluginProtocol replays, through a real origin, what the
// stock LiteSpeed Cache plugin sends once ramjet's X-LSCACHE: on reaches it.
func TestStockLSCachePluginProtocol(t *testing.T) {
	o := startOrigin(t)
	rj := startRamjet(t, o.URL)
	c := &http.Client{Timeout: 10 * time.Second}
	home, post := rj.URL+"/lscache.php?page=home", rj.URL+"/lscache.php?page=post"
	status := func(r result) string { return r.Header.Get("Cache-Status") }

	h1 := get(t, c, home)
	if !strings.Contains(status(h1), "stored") {
		t.Fatalf("home not stored (did X-LSCACHE reach the plugin?): %q", status(h1))
	}
	p1 := get(t, c, post)
	if status(get(t, c, home)) != "ramjet; hit" || status(get(t, c, post)) != "ramjet; hit" {
		t.Fatal("home and post not served from the cache")
	}

	// An anonymous commenter gets their own variant; others keep the
	// public page.
	mustStatus(t, get(t, c, rj.URL+"/lscache.php?page=comment"), 200, "comment")
	cp := get(t, c, post, "Cookie: _lscache_vary=commenter")
	if !bytes.Contains(cp.Body, []byte("awaiting moderation")) {
		t.Fatalf("commenter got the public page: %q (%s)", cp.Body, status(cp))
	}
	if r := get(t, c, post); !bytes.Equal(r.Body, p1.Body) || status(r) != "ramjet; hit" {
		t.Fatalf("an anonymous visitor got the commenter's variant: %q", r.Body)
	}

	// Login: private purge, logged-in cookie bypasses the public cache, the
	// admin bar arrives as a private ESI block with its &#038; decoded.
	login := get(t, c, rj.URL+"/lscache.php?page=login")
	mustStatus(t, login, 200, "login")
	admin := "Cookie: wordpress_logged_in_abc=admin%7C1"
	a := get(t, c, home, admin)
	if !bytes.Contains(a.Body, []byte("ADMIN-BAR for admin")) || bytes.Contains(a.Body, []byte("esi:include")) {
		t.Fatalf("admin page not assembled with its admin bar: %q", a.Body)
	}
	for _, u := range []string{home, post} {
		if r := get(t, c, u); bytes.Contains(r.Body, []byte("ADMIN")) {
			t.Fatalf("anonymous visitor saw admin content at %s: %q", u, r.Body)
		}
	}

	// Purge-all arrives on a later, unrelated response: every page of the
	// install (all carry the "2c4_" tag) is refetched.
	mustStatus(t, get(t, c, rj.URL+"/lscache.php?page=save"), 200, "save")
	for _, u := range []string{home, post} {
		if r := get(t, c, u); strings.Contains(status(r), "hit") {
			t.Fatalf("%s still a hit after public,2c4_: %q", u, status(r))
		}
	}
}
