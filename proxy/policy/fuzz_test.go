package policy

import (
	"strings"
	"testing"
	"time"
)

var controlSeeds = []string{
	"", "public, max-age=60", "no-cache,esi=on", "shared,private,no-vary,max-age=864020,esi=on",
	`max-age="60"`, "max-age=-1", "max-age=99999999999999999999999", "s-maxage=20, max-age=10",
	`private="Set-Cookie, X", no-cache`, `x="a\", b`, "max-age=300+60", `content="ESI/1.0"`,
	"no-store;abc", "max-stale=30, esi=off", ",,=,\"", "stale-while-revalidate=5, stale-if-error=600",
}

func FuzzParseLSCacheControl(f *testing.F) {
	for _, s := range controlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := ParseLSCacheControl(b)
		checkSeconds(t, c.MaxAge, c.SMaxAge, c.MaxStale)
		if (c.HasMaxAge || c.HasSMaxAge) && !c.Public {
			t.Errorf("max-age without public: %+v", c)
		}
	})
}

func FuzzParseCacheControl(f *testing.F) {
	for _, s := range controlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := ParseCacheControl(b)
		checkSeconds(t, c.MaxAge, c.SMaxAge, c.StaleWhileRevalidate, c.StaleIfError)
	})
}

func FuzzParseSurrogateControl(f *testing.F) {
	for _, s := range controlSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := ParseSurrogateControl(b)
		checkSeconds(t, s.MaxAge, s.Stale)
		if !s.HasMaxAge && s.Stale != 0 {
			t.Errorf("stale without max-age: %+v", s)
		}
	})
}

func FuzzAppendTags(f *testing.F) {
	for _, s := range []string{"", "a,b", " a  b ,, c\t", "368_HTTP.200,368_", "\r\n,\v\f", "é,ü ✓"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tags := AppendTags(nil, b)
		checkTags(t, tags, false)
		if len(tags) != countTags(b) {
			t.Errorf("AppendTags(%q) gave %d tags, countTags %d", b, len(tags), countTags(b))
		}
	})
}

func FuzzParseHTTPDate(f *testing.F) {
	for _, s := range []string{"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "0", "Thu, 29 Feb 2023 00:00:00 GMT"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := ParseHTTPDate(b)
		checkAgainstStdlib(t, b, got, ok)
	})
}

func FuzzDecide(f *testing.F) {
	f.Add("GET", 200, byte(0), []byte("public, max-age=60"), []byte(""), []byte("max-age=10"), []byte(""), []byte(""), []byte("5"),
		[]byte("Accept-Encoding, Cookie"), []byte("cookie=a"), []byte("a,b"), []byte("b c"), int64(time.Hour), int64(time.Minute))
	f.Add("HEAD", 404, byte(0xff), []byte(""), []byte("max-age=1+2"), []byte("private"), []byte("0"), []byte("x"), []byte("-1"),
		[]byte("*"), []byte(""), []byte(""), []byte(" , "), int64(-1), int64(1<<62))
	f.Add("GET", 200, byte(0), []byte(""), []byte(""), []byte(""), []byte("Mon, 01 Jan 0001 00:00:00 GMT"), []byte("Fri, 31 Dec 9999 23:59:59 GMT"), []byte("99999999999999"),
		[]byte(""), []byte(""), []byte(""), []byte(""), int64(1<<62), int64(0))
	f.Fuzz(func(t *testing.T, method string, status int, flags byte, ls, sc, cc, expires, date, age, vary, lsVary, tag1, tag2 []byte, defTTL, grace int64) {
		in := &Input{
			Now: testNow, Method: method, Status: status,
			Authorization: flags&1 != 0, SetCookie: flags&2 != 0, CacheSetCookie: flags&4 != 0,
			LSCacheControl: ls, SurrogateControl: sc, CacheControl: cc, Expires: expires, Date: date, Age: age,
			Vary: vary, LSVary: lsVary, TagHeaders: [][]byte{tag1, tag2},
			DefaultTTL: time.Duration(defTTL), Grace: time.Duration(grace),
		}
		checkDecision(t, Decide(in))
	})
}

// checkDecision asserts the invariants every Decision keeps.
func checkDecision(t *testing.T, d Decision) {
	t.Helper()
	year := time.Duration(maxSeconds) * time.Second
	switch {
	case d.Store && (d.Reason != "" || d.TTL <= 0 || d.TTL > year || d.Private):
		t.Errorf("stored with Reason=%q TTL=%v Private=%v", d.Reason, d.TTL, d.Private)
	case !d.Store && (d.TTL != 0 || d.Tags != nil || d.VaryHeaders != nil || d.VaryCookies != nil):
		t.Errorf("refused (%q) with TTL=%v or lists %q %q %q", d.Reason, d.TTL, d.Tags, d.VaryHeaders, d.VaryCookies)
	case !d.Store && !isReason(d.Reason):
		t.Errorf("refused with unknown reason %q", d.Reason)
	case d.Private && d.Reason != ReasonPrivate:
		t.Errorf("Private with reason %q", d.Reason)
	case d.StaleWhileRevalidate < 0 || d.StaleIfError < 0:
		t.Errorf("negative stale windows %v %v", d.StaleWhileRevalidate, d.StaleIfError)
	}
	checkTags(t, d.Tags, true)
	checkNames(t, d.VaryHeaders, true)
	checkNames(t, d.VaryCookies, false)
}

func isReason(r string) bool {
	switch r {
	case ReasonMethod, ReasonStatus, ReasonVaryStar, ReasonNoStore, ReasonNoCache, ReasonPrivate,
		ReasonAuthorization, ReasonSetCookie, ReasonNoTTL, ReasonExpired:
		return true
	}
	return false
}

func checkTags(t *testing.T, tags []string, unique bool) {
	t.Helper()
	for i, tag := range tags {
		if tag == "" || strings.ContainsAny(tag, ", \t\r\n\v\f") {
			t.Errorf("bad tag %q", tag)
		}
		if unique && contains(tags[:i], tag) {
			t.Errorf("duplicate tag %q in %q", tag, tags)
		}
	}
}

// checkNames checks vary lists: non-empty, unique, trimmed, and for header
// names lower case and never accept-encoding.
func checkNames(t *testing.T, names []string, header bool) {
	t.Helper()
	for i, n := range names {
		if n == "" || contains(names[:i], n) || n != strings.Trim(n, " \t") {
			t.Errorf("bad or duplicate name %q in %q", n, names)
		}
		if header && (n == "accept-encoding" || n != lowerString([]byte(n))) {
			t.Errorf("bad vary header %q", n)
		}
	}
}

func checkSeconds(t *testing.T, ns ...int) {
	t.Helper()
	for _, n := range ns {
		if n < 0 || n > maxSeconds {
			t.Errorf("seconds %d out of [0, %d]", n, maxSeconds)
		}
	}
}
