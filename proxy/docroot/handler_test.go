package docroot

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// do runs one request through h and returns the response with its body read.
func do(t *testing.T, h *Handler, method, uri string, hdr map[string]string, body string) (*fasthttp.Response, string, error) {
	t.Helper()
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	req.Header.SetHost("example.com")
	req.Header.Set("X-Forwarded-For", "10.0.0.9, 192.0.2.7")
	req.Header.Set("X-Forwarded-Proto", "https")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if body != "" {
		req.SetBodyString(body)
	}
	resp := &fasthttp.Response{}
	err := h.Do(req, resp)
	var b []byte
	if err == nil {
		if resp.IsBodyStream() {
			b, _ = io.ReadAll(resp.BodyStream())
			resp.CloseBodyStream()
		} else {
			b = resp.Body()
		}
	}
	return resp, string(b), err
}

func TestStatic(t *testing.T) {
	root := tree(t)
	big := strings.Repeat("0123456789", 10000) // 100 kB: streamed
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Root: root}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, body, err := do(t, h, "GET", "/style.css", nil, "")
	if err != nil || resp.StatusCode() != 200 || body != "body{}" {
		t.Fatalf("GET: %v %d %q", err, resp.StatusCode(), body)
	}
	if ct := string(resp.Header.ContentType()); !strings.HasPrefix(ct, "text/css") {
		t.Fatalf("content type %q", ct)
	}
	etag := string(resp.Header.Peek("ETag"))
	lm := string(resp.Header.Peek("Last-Modified"))
	if etag == "" || lm == "" {
		t.Fatal("no validators")
	}
	tests := []struct {
		name, method, uri string
		hdr               map[string]string
		code              int
		body, crange      string
	}{
		{name: "matching etag is 304", method: "GET", uri: "/style.css", hdr: map[string]string{"If-None-Match": etag}, code: 304},
		{name: "weak etag matches too", method: "GET", uri: "/style.css", hdr: map[string]string{"If-None-Match": `"x", W/` + etag}, code: 304},
		{name: "other etag is 200", method: "GET", uri: "/style.css", hdr: map[string]string{"If-None-Match": `"x"`}, code: 200, body: "body{}"},
		{name: "if-modified-since is 304", method: "GET", uri: "/style.css", hdr: map[string]string{"If-Modified-Since": lm}, code: 304},
		{name: "range", method: "GET", uri: "/big.txt", hdr: map[string]string{"Range": "bytes=10-14"}, code: 206, body: "01234", crange: "bytes 10-14/100000"},
		{name: "open range", method: "GET", uri: "/style.css", hdr: map[string]string{"Range": "bytes=4-"}, code: 206, body: "{}", crange: "bytes 4-5/6"},
		{name: "suffix range", method: "GET", uri: "/style.css", hdr: map[string]string{"Range": "bytes=-2"}, code: 206, body: "{}", crange: "bytes 4-5/6"},
		{name: "range past the end is 416", method: "GET", uri: "/style.css", hdr: map[string]string{"Range": "bytes=100-"}, code: 416, crange: "bytes */6"},
		{name: "several ranges get the whole file", method: "GET", uri: "/style.css", hdr: map[string]string{"Range": "bytes=0-1,3-4"}, code: 200, body: "body{}"},
		{name: "stale if-range gets the whole file", method: "GET", uri: "/style.css", hdr: map[string]string{"Range": "bytes=0-1", "If-Range": `"old"`}, code: 200, body: "body{}"},
		{name: "large file streamed whole", method: "GET", uri: "/big.txt", code: 200, body: big},
		{name: "head has no body", method: "HEAD", uri: "/big.txt", code: 200},
		{name: "post to a file is 405", method: "POST", uri: "/style.css", code: 405},
		{name: "dotfile is 403", method: "GET", uri: "/.env", code: 403, body: "Forbidden\n"},
		{name: "missing without front controller is 404", method: "GET", uri: "/missing", code: 404, body: "Not Found\n"},
		{name: "directory redirects with its query", method: "GET", uri: "/blog?x=1", code: 301, body: "Moved Permanently\n"},
		{name: "script without a pool is 403", method: "GET", uri: "/hello.php", code: 403, body: "Forbidden\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body, err := do(t, h, tt.method, tt.uri, tt.hdr, "")
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode() != tt.code || body != tt.body {
				t.Fatalf("status %d body %.40q, want %d %.40q", resp.StatusCode(), body, tt.code, tt.body)
			}
			if got := string(resp.Header.Peek("Content-Range")); got != tt.crange {
				t.Fatalf("Content-Range %q, want %q", got, tt.crange)
			}
		})
	}
	if resp, _, _ := do(t, h, "GET", "/blog?x=1", nil, ""); string(resp.Header.Peek("Location")) != "/blog/?x=1" {
		t.Fatalf("Location %q", resp.Header.Peek("Location"))
	}
}

func TestStaticCacheControlForTheProxy(t *testing.T) {
	root := tree(t)
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Root: root}, "no-cache"},
		{Config{Root: root, StaticTTL: 3600e9}, "public,max-age=3600"},
	} {
		h, _ := New(tt.cfg, nil, nil)
		resp, _, _ := do(t, h, "GET", "/style.css", nil, "")
		if got := string(resp.Header.Peek("X-LiteSpeed-Cache-Control")); got != tt.want {
			t.Fatalf("static ttl %v: %q, want %q", tt.cfg.StaticTTL, got, tt.want)
		}
	}
}

func TestPHP(t *testing.T) {
	root := tree(t)
	php := &fakePHP{}
	h, err := New(Config{Root: root, FrontController: "/index.php", PathInfo: true}, php, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 200<<10)
	tests := []struct {
		name, method, uri, body, out string
		hdr                          map[string]string
		code                         int
		want                         string
		params                       map[string]string
		header                       map[string]string
	}{
		{name: "hello", method: "GET", uri: "/hello.php?a=1&b=2",
			hdr: map[string]string{HeaderRemotePort: "51234", HeaderServerAddr: "192.0.2.1"},
			out: "Content-type: text/html\r\n\r\nhi", code: 200, want: "hi",
			params: map[string]string{
				"SCRIPT_FILENAME": filepath.Join(h.realRoot, "hello.php"), "SCRIPT_NAME": "/hello.php",
				"REQUEST_URI": "/hello.php?a=1&b=2", "QUERY_STRING": "a=1&b=2", "REQUEST_METHOD": "GET",
				"DOCUMENT_ROOT": h.realRoot, "DOCUMENT_URI": "/hello.php", "REMOTE_ADDR": "192.0.2.7",
				"REMOTE_PORT": "51234", "SERVER_ADDR": "192.0.2.1",
				"HTTP_X_FORWARDED_FOR": "10.0.0.9", "HTTPS": "on", "SERVER_PORT": "443", "SERVER_NAME": "example.com",
				"REQUEST_SCHEME": "https", "GATEWAY_INTERFACE": "CGI/1.1", "REDIRECT_STATUS": "200", "CONTENT_LENGTH": "",
			}},
		{name: "status and location from the script", method: "GET", uri: "/hello.php",
			out: "Status: 301 Moved\nLocation: /there\n\n", code: 301,
			header: map[string]string{"Location": "/there"}},
		{name: "location alone is 302", method: "GET", uri: "/hello.php",
			out: "Location: http://example.com/x\n\n", code: 302},
		{name: "header and cookie pass", method: "GET", uri: "/hello.php",
			out: "X-Thing: 1\r\nSet-Cookie: a=b; Path=/\r\nContent-Length: 999\r\n\r\nok", code: 200, want: "ok",
			header: map[string]string{"X-Thing": "1"}},
		{name: "permalink goes to the front controller with its query", method: "GET", uri: "/2024/post/?p=3",
			out: "\r\nfront", code: 200, want: "front",
			params: map[string]string{"SCRIPT_NAME": "/index.php", "REQUEST_URI": "/2024/post/?p=3", "QUERY_STRING": "p=3", "DOCUMENT_URI": "/index.php"}},
		{name: "path info", method: "GET", uri: "/app/run.php/a/b",
			out: "\r\n/a/b", code: 200, want: "/a/b",
			params: map[string]string{"SCRIPT_NAME": "/app/run.php", "PATH_INFO": "/a/b", "DOCUMENT_URI": "/app/run.php/a/b"}},
		{name: "post body and content type", method: "POST", uri: "/hello.php", body: "a=1&b=2",
			hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			out: "\r\nposted", code: 200, want: "posted",
			params: map[string]string{"CONTENT_LENGTH": "7", "CONTENT_TYPE": "application/x-www-form-urlencoded", "REQUEST_METHOD": "POST"}},
		{name: "large output streamed", method: "GET", uri: "/hello.php", out: "\r\n" + big, code: 200, want: big},
		{name: "httpoxy and underscore headers dropped", method: "GET", uri: "/hello.php",
			hdr: map[string]string{"Proxy": "http://evil", "X_Forwarded_For": "1.2.3.4", "Accept-Language": "de"},
			out: "\r\n", code: 200,
			params: map[string]string{"HTTP_ACCEPT_LANGUAGE": "de"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			php.out, php.err = tt.out, nil
			resp, body, err := do(t, h, tt.method, tt.uri, tt.hdr, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode() != tt.code || body != tt.want {
				t.Fatalf("status %d body %.40q, want %d %.40q", resp.StatusCode(), body, tt.code, tt.want)
			}
			for k, v := range tt.params {
				if got, _ := php.param(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			for k, v := range tt.header {
				if got := string(resp.Header.Peek(k)); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
	for _, name := range []string{"HTTP_PROXY", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST",
		"HTTP_X_RAMJET_REMOTE_PORT", "HTTP_X_RAMJET_SERVER_ADDR"} {
		if v, ok := php.param(name); ok {
			t.Errorf("%s passed to PHP: %q", name, v)
		}
	}
	if string(php.stdin) != "" {
		t.Errorf("last request had no body but PHP read %q", php.stdin)
	}
}

func TestPHPFailureBeforeOutputIsAnError(t *testing.T) {
	boom := errors.New("worker crashed")
	h, _ := New(Config{Root: tree(t)}, &fakePHP{err: boom}, nil)
	_, _, err := do(t, h, "GET", "/hello.php", nil, "")
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the pool's error in the chain", err)
	}
}

func TestPHPMalformedHeadIsAnError(t *testing.T) {
	h, _ := New(Config{Root: tree(t)}, &fakePHP{out: "no colon here\n\nbody"}, nil)
	if _, _, err := do(t, h, "GET", "/hello.php", nil, ""); err == nil {
		t.Fatal("malformed CGI head accepted")
	}
}

func TestChunkedBodySpooledWithItsLength(t *testing.T) {
	php := &fakePHP{out: "\r\nok"}
	h, _ := New(Config{Root: tree(t), MaxBodyInMemory: 10}, php, nil)
	body := strings.Repeat("b", 1000)
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod("POST")
	req.SetRequestURI("/hello.php")
	req.SetBodyStream(strings.NewReader(body), -1)
	resp := &fasthttp.Response{}
	if err := h.Do(req, resp); err != nil {
		t.Fatal(err)
	}
	if got, _ := php.param("CONTENT_LENGTH"); got != "1000" || string(php.stdin) != body {
		t.Fatalf("CONTENT_LENGTH %q, stdin %d bytes", got, len(php.stdin))
	}
}

func TestPHPOnlyFallsBackToTheOrigin(t *testing.T) {
	origin := &recordingUpstream{}
	h, _ := New(Config{Root: tree(t), PHPOnly: true}, &fakePHP{}, origin)
	hdr := map[string]string{HeaderRemotePort: "51234", HeaderServerAddr: "192.0.2.1"}
	if _, _, err := do(t, h, "GET", "/style.css", hdr, ""); !errors.Is(err, errFallback) {
		t.Fatalf("err = %v, want the origin's", err)
	}
	if origin.port != "" || origin.addr != "" {
		t.Fatalf("the origin got the docroot's connection headers: %q %q", origin.port, origin.addr)
	}
}

// recordingUpstream fails like failUpstream and keeps the connection
// headers it was sent.
type recordingUpstream struct{ port, addr string }

func (r *recordingUpstream) Do(req *fasthttp.Request, _ *fasthttp.Response) error {
	r.port = string(req.Header.Peek(HeaderRemotePort))
	r.addr = string(req.Header.Peek(HeaderServerAddr))
	return errFallback
}
