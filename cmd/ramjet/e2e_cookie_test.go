package main_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

// The origin gets the Cookie header as the client sent it, though ramjet
// read the cookies (bypass check, private identity, vary): fasthttp
// would write them back re-serialised ("a=1; b=two").
func TestCookieHeaderReachesTheOriginByteForByte(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	const raw = "a=1;b=two;  c=3"
	for _, path := range []string{"/e/cookie-miss?" + hq("Cache-Control: no-store"), "/e/cookie-store?" + hq("Cache-Control: max-age=60")} {
		r := get(t, c, rj.URL+path, "Cookie: "+raw)
		if got := r.Echo()["hdr.cookie"]; got != raw {
			t.Errorf("%s: origin saw Cookie %q, want %q as sent", path, got, raw)
		}
	}
	r := do(t, c, http.MethodPost, rj.URL+"/e/cookie-post", "Cookie: "+raw)
	if got := r.Echo()["hdr.cookie"]; got != raw {
		t.Errorf("POST: origin saw Cookie %q, want %q as sent", got, raw)
	}
}

// And PHP run by ramjet itself sees it so in HTTP_COOKIE.
func TestCookieHeaderReachesPHPByteForByte(t *testing.T) {
	rj, _ := startPHP(t, "")
	const raw = "a=1;b=two;  c=3"
	r := get(t, &http.Client{Timeout: 10 * time.Second}, rj.URL+"/env.php", "Cookie: "+raw)
	if !bytes.Contains(r.Body, []byte("cookie: "+raw+"\n")) {
		t.Fatalf("PHP did not see the Cookie header as sent:\n%s", r.Body)
	}
}
