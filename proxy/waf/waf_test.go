package waf

import (
	"bufio"
	"bytes"
	"mime/multipart"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
)

// marker is what the test rule file looks for in every part of a request.
const marker = "zq7marker"

const markerRule = `SecRule REQUEST_LINE|REQUEST_METHOD|REQUEST_URI|REQUEST_HEADERS|REQUEST_HEADERS_NAMES|REQUEST_COOKIES|REQUEST_COOKIES_NAMES|ARGS|ARGS_NAMES|REQUEST_BODY|FILES|FILES_NAMES|REMOTE_ADDR "@contains ` + marker + `" "id:10,phase:2,deny,status:403,log,msg:'marker',severity:2,t:none,t:lowercase"
SecRule REMOTE_ADDR "@ipMatch 198.51.100.66" "id:11,phase:1,deny,status:403,log,msg:'client',severity:2"
SecRule REQUEST_PROTOCOL "@streq HTTP/3.0" "id:12,phase:1,deny,status:403,log,msg:'h3',severity:2"
`

var markerSet = sync.OnceValues(func() (*Set, error) {
	dir, err := os.MkdirTemp("", "waf-test-")
	if err != nil {
		return nil, err
	}
	f := filepath.Join(dir, "marker.conf")
	if err := os.WriteFile(f, []byte(markerRule), 0o644); err != nil {
		return nil, err
	}
	return NewLibrary().Get(Rules{Exclusions: []string{"wordpress"}, Before: []string{f}})
})

func testSet(t testing.TB) *Set {
	t.Helper()
	s, err := markerSet()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func inspect(s *Set, req *fasthttp.Request, proto string) Verdict {
	body := req.Body()
	tx, v := s.Inspect(&Request{Req: req, Client: netip.MustParseAddr("192.0.2.1"), ClientPort: 40000,
		Server: netip.MustParseAddrPort("127.0.0.1:80"), Protocol: proto, Body: body})
	tx.Close()
	return v
}

func parseRaw(t testing.TB, raw string) *fasthttp.Request {
	t.Helper()
	req := &fasthttp.Request{}
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestInspectSeesEveryPartOfTheRequest(t *testing.T) {
	s := testSet(t)
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	fw, _ := mw.CreateFormFile("upload", marker+".txt")
	_, _ = fw.Write([]byte("hello"))
	_ = mw.Close()
	base := "Host: shop.example\r\nUser-Agent: Mozilla/5.0\r\nAccept: text/html\r\n"
	tests := []struct{ name, raw string }{
		{"query", "GET /p?a=" + marker + " HTTP/1.1\r\n" + base + "\r\n"},
		{"query name", "GET /p?" + marker + "=1 HTTP/1.1\r\n" + base + "\r\n"},
		{"path", "GET /" + marker + " HTTP/1.1\r\n" + base + "\r\n"},
		{"header value", "GET /p HTTP/1.1\r\n" + base + "X-Thing: " + marker + "\r\n\r\n"},
		{"header name", "GET /p HTTP/1.1\r\n" + base + "X-" + marker + ": 1\r\n\r\n"},
		{"cookie", "GET /p HTTP/1.1\r\n" + base + "Cookie: a=1; s=" + marker + "\r\n\r\n"},
		{"second cookie line", "GET /p HTTP/1.1\r\n" + base + "Cookie: a=1\r\nCookie: s=" + marker + "\r\n\r\n"},
		{"form body", "POST /p HTTP/1.1\r\n" + base + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 16\r\n\r\nx=1&y=" + marker + "\r\n"},
		{"json body", "POST /p HTTP/1.1\r\n" + base + "Content-Type: application/json\r\nContent-Length: 25\r\n\r\n{\"a\":{\"b\":\"" + marker + "\"}}   "},
		{"raw body", "POST /p HTTP/1.1\r\n" + base + "Content-Type: application/octet-stream\r\nContent-Length: 9\r\n\r\n" + marker},
		{"multipart file name", "POST /p HTTP/1.1\r\n" + base + "Content-Type: " + mw.FormDataContentType() + "\r\nContent-Length: " + strconv.Itoa(mp.Len()) + "\r\n\r\n" + mp.String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := parseRaw(t, tt.raw)
			v := inspect(s, req, "")
			if !v.Stop || !hasRule(v, 10) {
				t.Errorf("verdict %+v: want rule 10 to stop it", v)
			}
		})
	}
	t.Run("a clean request passes", func(t *testing.T) {
		if v := inspect(s, parseRaw(t, "GET /p?s=hello+world HTTP/1.1\r\n"+base+"\r\n"), ""); v.Stop {
			t.Errorf("verdict %+v: want it to pass", v)
		}
	})
	t.Run("http/2 fields, host from :authority", func(t *testing.T) {
		req := h2Request([]field{{":method", "GET"}, {":path", "/p"}, {":authority", "shop.example"}, {"cookie", "s=" + marker}})
		if v := inspect(s, req, "HTTP/2.0"); !v.Stop {
			t.Errorf("verdict %+v: want the cookie seen", v)
		}
	})
	t.Run("the client address is REMOTE_ADDR", func(t *testing.T) {
		tx, v := s.Inspect(&Request{Req: parseRaw(t, "GET / HTTP/1.1\r\n"+base+"\r\n"), Client: netip.MustParseAddr("198.51.100.66")})
		tx.Close()
		if !v.Stop || v.RuleID != 11 {
			t.Errorf("verdict %+v: want rule 11 on the client address", v)
		}
	})
}

func TestVerdictCarriesScoreRulesAndCutData(t *testing.T) {
	s := testSet(t)
	long := strings.Repeat("%27+OR+%271%27%3D%271+", 40)
	v := inspect(s, parseRaw(t, "GET /p?id="+long+" HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0\r\nAccept: */*\r\n\r\n"), "")
	if !v.Stop || v.RuleID != ruleInboundEvaluation || v.Score < 5 || !hasRule(v, 942100) {
		t.Fatalf("verdict %+v: want a CRS block by 949110 with 942100 and a score", v)
	}
	g := v.Gravest()
	if g == nil || len(g.Data) > MaxData || !strings.HasPrefix(g.Data, "ARGS:id=") {
		t.Errorf("gravest match %+v: want ARGS:id data cut to %d bytes", g, MaxData)
	}
	for _, m := range v.Matches {
		if m.ID == ruleInboundEvaluation || m.Severity < 0 {
			t.Errorf("match %+v: evaluation and setup rules are not matches", m)
		}
	}
}

func TestLibrarySharesOneSetPerRules(t *testing.T) {
	l := NewLibrary()
	dir := t.TempDir()
	f := filepath.Join(dir, "site.conf")
	write := func(s string) {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`SecRule ARGS "@streq a" "id:20,phase:1,deny"` + "\n")
	a, err := l.Get(Rules{Paranoia: 1, After: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := l.Get(Rules{After: []string{f}}) // paranoia 0 is 1
	c, _ := l.Get(Rules{Paranoia: 2, After: []string{f}})
	if a != b || a == c || l.Len() != 2 || l.Compiled() != 2 {
		t.Fatalf("sets: a==b %v, a==c %v, held %d, compiled %d; want one set per distinct Rules", a == b, a == c, l.Len(), l.Compiled())
	}
	write(`SecRule ARGS "@streq b" "id:20,phase:1,deny"` + "\n")
	if d, _ := l.Get(Rules{After: []string{f}}); d == a {
		t.Error("a changed rule file kept the old set")
	}
	l.Keep([]*Set{c})
	if l.Len() != 1 {
		t.Errorf("after Keep: %d sets, want 1", l.Len())
	}
	write(`SecRule ARGS "@nosuch b" "id:20,phase:1,deny"` + "\n")
	if _, err := l.Get(Rules{After: []string{f}}); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("a rule that does not compile: %v", err)
	}
	if l.Len() != 1 || l.Compiled() != 3 {
		t.Errorf("a failed compile was kept or counted: %d sets, %d compiled (want 1, 3)", l.Len(), l.Compiled())
	}
	if _, err := l.Get(Rules{Exclusions: []string{"drupal"}}); err == nil {
		t.Error("an unknown exclusion set compiled")
	}
}

type field struct{ name, value string }

// h2Request builds a request from HTTP/2 header fields as proxy/h2 does:
// pseudo-header fields set the method, target and host, the others are
// added as they come.
func h2Request(fields []field) *fasthttp.Request {
	req := &fasthttp.Request{}
	h := &req.Header
	for _, f := range fields {
		switch f.name {
		case ":method":
			h.SetMethod(f.value)
		case ":path":
			h.SetRequestURI(f.value)
		case ":authority":
			h.SetHost(f.value)
		case ":scheme":
		default:
			h.Add(f.name, f.value)
		}
	}
	return req
}

func hasRule(v Verdict, id int) bool {
	for _, m := range v.Matches {
		if m.ID == id {
			return true
		}
	}
	return v.RuleID == id
}

// FuzzInspectHTTP1 feeds raw HTTP/1.1 requests through fasthttp's parser
// into the mapping: it never panics, and a marker anywhere in the header
// block or the body fasthttp read is seen by the rules.
func FuzzInspectHTTP1(f *testing.F) {
	f.Add("GET /p?a=" + marker + " HTTP/1.1\r\nHost: a\r\n\r\n")
	f.Add("POST /p HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 12\r\n\r\nq=zq7marker\n")
	f.Add("POST /p HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n[1,{}")
	f.Add("GET /%zz?x=1 HTTP/1.1\r\nHost: [::1]:80\r\nCookie: =; ;x\r\nCookie: zq7marker\r\n\r\n")
	f.Add("POST /u HTTP/1.1\r\nHost: a\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 70\r\n\r\n--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.php\"\r\n\r\n<?php\r\n--b--\r\n")
	s := testSet(f)
	f.Fuzz(func(t *testing.T, raw string) {
		req := &fasthttp.Request{}
		if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			return
		}
		v := inspect(s, req, "")
		head, _, _ := strings.Cut(raw, "\r\n\r\n")
		if (strings.Contains(head, marker) || bytes.Contains(req.Body(), []byte(marker))) && !v.Stop {
			t.Errorf("marker in %q not seen: %+v", raw, v)
		}
	})
}

// FuzzInspectHTTP2Fields feeds HTTP/2 header fields (pseudo-header
// fields included) and a body: never a panic, and a marker in a regular
// field's value, in :path or in the body is seen.
func FuzzInspectHTTP2Fields(f *testing.F) {
	f.Add("GET", "/p?x="+marker, "a.example", "cookie\x00s=1\x00accept\x00*/*", "")
	f.Add("POST", "/p", "a.example:8443", "content-type\x00application/x-www-form-urlencoded", "a="+marker)
	f.Add("POST", "/p", "", "content-type\x00application/json\x00host\x00b", `{"`+marker+`":1}`)
	f.Add("OPTIONS", "*", "[2001:db8::1]", "x-a\x00"+marker, "")
	s := testSet(f)
	f.Fuzz(func(t *testing.T, method, path, authority, pairs, body string) {
		fields := []field{{":method", method}, {":path", path}, {":scheme", "https"}, {":authority", authority}}
		parts := strings.Split(pairs, "\x00")
		for i := 0; i+1 < len(parts); i += 2 {
			if parts[i] == "" || parts[i][0] == ':' {
				continue // proxy/h2 refuses unknown pseudo-header fields and empty names
			}
			fields = append(fields, field{strings.ToLower(parts[i]), parts[i+1]})
		}
		req := h2Request(fields)
		req.SetBodyString(body)
		v := inspect(s, req, "HTTP/2.0")
		seen := strings.Contains(body, marker) && len(req.Body()) > 0
		for _, fl := range fields[4:] {
			seen = seen || strings.Contains(fl.value, marker) && validValue(fl.value)
		}
		if seen && !v.Stop {
			t.Errorf("marker not seen in %+v body %q: %+v", fields, body, v)
		}
	})
}

// validValue: a field value fasthttp keeps as it is (no line breaks).
func validValue(v string) bool { return !strings.ContainsAny(v, "\r\n\x00") }

// TestCRSSettingsGoBeforeTheCRS: the CRS's methods policy stops PUT at
// paranoia 1, and a rules_before_crs file that sets tx.allowed_methods
// (as README says) lets it through.
func TestCRSSettingsGoBeforeTheCRS(t *testing.T) {
	f := filepath.Join(t.TempDir(), "methods.conf")
	if err := os.WriteFile(f, []byte(`SecAction "id:1003,phase:1,pass,nolog,setvar:'tx.allowed_methods=GET HEAD POST OPTIONS PUT PATCH DELETE'"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := NewLibrary()
	plain, err := l.Get(Rules{})
	if err != nil {
		t.Fatal(err)
	}
	api, err := l.Get(Rules{Before: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	put := "PUT /api/items/1 HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0\r\nAccept: */*\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	if v := inspect(plain, parseRaw(t, put), ""); !v.Stop || !hasRule(v, 911100) {
		t.Errorf("PUT under the CRS's defaults: %+v, want 911100 to stop it", v)
	}
	if v := inspect(api, parseRaw(t, put), ""); v.Stop {
		t.Errorf("PUT with allowed_methods set before the CRS: %+v, want it to pass", v)
	}
}

// REQUEST_PROTOCOL is what the request came over: the request line's
// for HTTP/1.x, HTTP/2.0 and HTTP/3.0 for the protocols without one.
func TestRequestProtocolIsTheTransports(t *testing.T) {
	s := testSet(t)
	base := "Host: shop.example\r\nUser-Agent: Mozilla/5.0\r\nAccept: */*\r\n"
	for _, tt := range []struct {
		proto string
		stop  bool
	}{{"", false}, {"HTTP/2.0", false}, {"HTTP/3.0", true}} {
		v := inspect(s, parseRaw(t, "GET /p HTTP/1.1\r\n"+base+"\r\n"), tt.proto)
		if v.Stop != tt.stop || v.Stop && !hasRule(v, 12) {
			t.Errorf("protocol %q: verdict %+v, want stopped by rule 12: %v", tt.proto, v, tt.stop)
		}
	}
}
