package purge

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
)

// fakeApplier records commands and answers one count per target kind.
type fakeApplier struct {
	mu   sync.Mutex // guards cmds
	cmds []Command
}

func (f *fakeApplier) Apply(cmd Command, source string) Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	if source != "api" {
		panic("source " + source)
	}
	f.cmds = append(f.cmds, cmd)
	var r Result
	for _, t := range cmd.Targets {
		switch t.Kind {
		case KindTag:
			r.Tags++
		case KindURL:
			r.URLs++
		case KindPrefix:
			r.Prefixes++
		case KindAll:
			r.All = true
		}
	}
	return r
}

func (f *fakeApplier) last() (Command, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cmds) == 0 {
		return Command{}, false
	}
	return f.cmds[len(f.cmds)-1], true
}

type apiCall struct {
	method, uri, ctype, body, auth, remote string
}

func serveAPI(api *API, c apiCall) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod(c.method)
	req.SetRequestURI(c.uri)
	if c.ctype != "" {
		req.Header.SetContentType(c.ctype)
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	req.SetBodyString(c.body)
	remote := c.remote
	if remote == "" {
		remote = "127.0.0.1"
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(remote), Port: 40000}, nil)
	api.ServePurge(&ctx)
	return &ctx
}

func errorOf(t *testing.T, ctx *fasthttp.RequestCtx) string {
	t.Helper()
	var e struct{ Error string }
	if err := json.Unmarshal(ctx.Response.Body(), &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", ctx.Response.Body(), err)
	}
	return e.Error
}

func TestAPIAuth(t *testing.T) {
	cfg := APIConfig{Token: "s3cret", Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	form := "application/x-www-form-urlencoded"
	tests := []struct {
		name       string
		cfg        APIConfig
		call       apiCall
		wantStatus int
		wantHeader [2]string
	}{
		{"no token", cfg, apiCall{method: "POST", uri: "/purge?tag=a", remote: "10.1.2.3"}, 401, [2]string{"WWW-Authenticate", `Bearer realm="ramjet"`}},
		{"wrong token", cfg, apiCall{method: "POST", uri: "/purge?tag=a", auth: "Bearer nope", remote: "10.1.2.3"}, 401, [2]string{"WWW-Authenticate", `Bearer realm="ramjet"`}},
		{"token without Bearer", cfg, apiCall{method: "POST", uri: "/purge?tag=a", auth: "s3cret", remote: "10.1.2.3"}, 401, [2]string{}},
		{"wrong cidr even with token", cfg, apiCall{method: "POST", uri: "/purge?tag=a", auth: "Bearer s3cret", remote: "192.168.1.1"}, 403, [2]string{}},
		{"wrong cidr before token", cfg, apiCall{method: "POST", uri: "/purge?tag=a", remote: "192.168.1.1"}, 403, [2]string{}},
		{"right", cfg, apiCall{method: "POST", uri: "/purge", ctype: form, body: "tag=a", auth: "Bearer s3cret", remote: "10.1.2.3"}, 200, [2]string{}},
		{"ipv4-mapped ipv6 peer", cfg, apiCall{method: "POST", uri: "/purge?tag=a", auth: "Bearer s3cret", remote: "::ffff:10.1.2.3"}, 200, [2]string{}},
		{"default allows loopback", APIConfig{}, apiCall{method: "POST", uri: "/purge?tag=a"}, 200, [2]string{}},
		{"default allows ::1", APIConfig{}, apiCall{method: "POST", uri: "/purge?tag=a", remote: "::1"}, 200, [2]string{}},
		{"default refuses others", APIConfig{}, apiCall{method: "POST", uri: "/purge?tag=a", remote: "10.1.2.3"}, 403, [2]string{}},
		{"method after auth", cfg, apiCall{method: "GET", uri: "/purge?tag=a", auth: "Bearer s3cret", remote: "10.1.2.3"}, 405, [2]string{"Allow", "POST"}},
		{"method unauthenticated is 401", cfg, apiCall{method: "GET", uri: "/purge?tag=a", remote: "10.1.2.3"}, 401, [2]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeApplier{}
			ctx := serveAPI(NewAPI(tt.cfg, f), tt.call)
			if got := ctx.Response.StatusCode(); got != tt.wantStatus {
				t.Fatalf("status %d, want %d (%s)", got, tt.wantStatus, ctx.Response.Body())
			}
			if k := tt.wantHeader[0]; k != "" && string(ctx.Response.Header.Peek(k)) != tt.wantHeader[1] {
				t.Fatalf("%s = %q, want %q", k, ctx.Response.Header.Peek(k), tt.wantHeader[1])
			}
			if _, applied := f.last(); applied != (tt.wantStatus == 200) {
				t.Fatalf("applied = %v with status %d", applied, tt.wantStatus)
			}
			if tt.wantStatus == 403 && errorOf(t, ctx) != "forbidden" {
				t.Fatalf("403 body %q", ctx.Response.Body())
			}
		})
	}
}

func multipartBody(t *testing.T, fields ...string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i := 0; i < len(fields); i += 2 {
		if err := w.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), b.String()
}

func TestAPIParsesRequests(t *testing.T) {
	mpType, mpBody := multipartBody(t, "tag", "a", "tag", "b", "soft", "1")
	tests := []struct {
		name string
		call apiCall
		want Command
		resp string
	}{
		{"query fields", apiCall{uri: "/purge?tag=a&tag=b&url=/x&prefix=/blog/&soft=1&host=example.com"},
			Command{Host: "example.com", Targets: []Target{{KindTag, "a", true}, {KindTag, "b", true}, {KindURL, "/x", true}, {KindPrefix, "/blog/", true}}},
			`{"purged":{"tags":2,"urls":1,"prefixes":1,"all":false},"soft":true}`},
		{"form fields", apiCall{uri: "/purge", ctype: "application/x-www-form-urlencoded", body: "tag=a&url=https%3A%2F%2Fex.com%2Fp%3Fq%3D1"},
			Command{Targets: []Target{{Kind: KindTag, Value: "a"}, {Kind: KindURL, Value: "https://ex.com/p?q=1"}}},
			`{"purged":{"tags":1,"urls":1,"prefixes":0,"all":false},"soft":false}`},
		{"form and query merge", apiCall{uri: "/purge?tag=q", ctype: "application/x-www-form-urlencoded", body: "tag=f"},
			Command{Targets: []Target{{Kind: KindTag, Value: "q"}, {Kind: KindTag, Value: "f"}}}, ""},
		{"multipart", apiCall{uri: "/purge", ctype: mpType, body: mpBody},
			Command{Targets: []Target{{KindTag, "a", true}, {KindTag, "b", true}}}, ""},
		{"all", apiCall{uri: "/purge?all=1"}, Command{Targets: []Target{{Kind: KindAll}}},
			`{"purged":{"tags":0,"urls":0,"prefixes":0,"all":true},"soft":false}`},
		{"all=true soft=on", apiCall{uri: "/purge?all=true&soft=on"}, Command{Targets: []Target{{Kind: KindAll, Soft: true}}}, ""},
		{"json", apiCall{uri: "/purge", ctype: "application/json; charset=utf-8",
			body: `{"tags":["a"],"urls":["HTTP://Ex.com/x"],"prefixes":["/p/"],"all":false,"soft":true,"host":"ex.com"}`},
			Command{Host: "ex.com", Targets: []Target{{KindTag, "a", true}, {KindURL, "http://Ex.com/x", true}, {KindPrefix, "/p/", true}}},
			`{"purged":{"tags":1,"urls":1,"prefixes":1,"all":false},"soft":true}`},
		{"json all only", apiCall{uri: "/purge", ctype: "application/json", body: `{"all":true}`},
			Command{Targets: []Target{{Kind: KindAll}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeApplier{}
			tt.call.method = "POST"
			ctx := serveAPI(NewAPI(APIConfig{}, f), tt.call)
			if ctx.Response.StatusCode() != 200 {
				t.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
			}
			got, _ := f.last()
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("command\n got %+v\nwant %+v", got, tt.want)
			}
			if tt.resp != "" && strings.TrimSpace(string(ctx.Response.Body())) != tt.resp {
				t.Fatalf("body %s, want %s", ctx.Response.Body(), tt.resp)
			}
			if ct := string(ctx.Response.Header.ContentType()); ct != "application/json" {
				t.Fatalf("content type %q", ct)
			}
		})
	}
}

func TestAPIRejectsBadRequests(t *testing.T) {
	form := "application/x-www-form-urlencoded"
	tests := []struct {
		name    string
		call    apiCall
		status  int
		errPart string
	}{
		{"no target", apiCall{uri: "/purge"}, 400, "nothing to purge"},
		{"soft alone", apiCall{uri: "/purge?soft=1"}, 400, "nothing to purge"},
		{"malformed json", apiCall{uri: "/purge", ctype: "application/json", body: `{"tags":[`}, 400, "json body"},
		{"unknown json field", apiCall{uri: "/purge", ctype: "application/json", body: `{"tag":["a"]}`}, 400, "unknown field"},
		{"json type mismatch", apiCall{uri: "/purge", ctype: "application/json", body: `{"tags":"a"}`}, 400, "json body"},
		{"json trailing data", apiCall{uri: "/purge", ctype: "application/json", body: `{"tags":["a"]} {}`}, 400, "after the object"},
		{"json plus query", apiCall{uri: "/purge?tag=a", ctype: "application/json", body: `{"tags":["b"]}`}, 400, "not both"},
		{"unknown form field", apiCall{uri: "/purge?tag=a&sfot=1"}, 400, `unknown field "sfot"`},
		{"bad bool", apiCall{uri: "/purge?all=maybe"}, 400, "not a boolean"},
		{"empty tag", apiCall{uri: "/purge?tag="}, 400, "tag"},
		{"control char tag", apiCall{uri: "/purge", ctype: form, body: "tag=a%01b"}, 400, "control"},
		{"relative url", apiCall{uri: "/purge?url=blog/x"}, 400, "absolute"},
		{"ftp url", apiCall{uri: "/purge?url=ftp://h/x"}, 400, "absolute"},
		{"scheme-relative url", apiCall{uri: "/purge?url=//h/x"}, 400, "absolute"},
		{"url without host", apiCall{uri: "/purge?url=http:///x"}, 400, "absolute"},
		{"bad prefix", apiCall{uri: "/purge?prefix=x"}, 400, "prefix"},
		{"bad host", apiCall{uri: "/purge?tag=a&host=a/b"}, 400, "host"},
		{"all errors joined", apiCall{uri: "/purge?url=x&prefix=y"}, 400, "prefix \"y\""},
		{"too large", apiCall{uri: "/purge", ctype: "application/json", body: `{"tags":["` + strings.Repeat("a", 1<<20) + `"]}`}, 413, "body over"},
		{"unsupported type", apiCall{uri: "/purge", ctype: "text/plain", body: "tag=a"}, 415, "content type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeApplier{}
			tt.call.method = "POST"
			ctx := serveAPI(NewAPI(APIConfig{}, f), tt.call)
			if ctx.Response.StatusCode() != tt.status {
				t.Fatalf("status %d, want %d: %s", ctx.Response.StatusCode(), tt.status, ctx.Response.Body())
			}
			if msg := errorOf(t, ctx); !strings.Contains(msg, tt.errPart) {
				t.Fatalf("error %q, want it to mention %q", msg, tt.errPart)
			}
			if _, applied := f.last(); applied {
				t.Fatal("a rejected request was applied")
			}
		})
	}
}

func TestAPIMaxBodyConfigurable(t *testing.T) {
	f := &fakeApplier{}
	api := NewAPI(APIConfig{MaxBody: 16}, f)
	ctx := serveAPI(api, apiCall{method: "POST", uri: "/purge", ctype: "application/json", body: `{"tags":["abcdefgh"]}`})
	if ctx.Response.StatusCode() != 413 {
		t.Fatalf("status %d, want 413", ctx.Response.StatusCode())
	}
}
