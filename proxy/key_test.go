package proxy

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestAppendKeyNormalises(t *testing.T) {
	drop := newPatterns([]string{"utm_*", "gclid", "fbclid", "_ga"})
	tests := []struct {
		name, host, path, query, want string
	}{
		{"plain path", "example.com", "/a", "", "http://example.com/a"},
		{"empty path is slash", "example.com", "", "", "http://example.com/"},
		{"host lower-cased", "ExAmPle.COM", "/a", "", "http://example.com/a"},
		{"query sorted", "h", "/", "b=2&a=1", "http://h/?a=1&b=2"},
		{"tracking params dropped", "h", "/", "utm_source=x&a=1&gclid=z&utm_medium=y", "http://h/?a=1"},
		{"only tracking params leaves no query", "h", "/p", "utm_source=x&fbclid=1", "http://h/p"},
		{"repeated param order kept", "h", "/", "a=2&a=1", "http://h/?a=2&a=1"},
		{"empty params skipped", "h", "/", "&&a=1&", "http://h/?a=1"},
		{"param without value", "h", "/", "b&a", "http://h/?a&b"},
		{"unreserved escapes decoded", "h", "/%7Euser/%41b", "", "http://h/~user/Ab"},
		{"reserved escapes kept upper-cased", "h", "/a%2fb", "", "http://h/a%2Fb"},
		{"broken escape kept", "h", "/a%zz%4", "", "http://h/a%zz%4"},
		{"prefix pattern is a prefix only", "h", "/", "xutm_a=1", "http://h/?xutm_a=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var params [][]byte
			got := appendKey(nil, &params, &target{[]byte("http"), []byte(tt.host), []byte(tt.path), []byte(tt.query)}, keyDrop{site: drop})
			if string(got) != tt.want {
				t.Fatalf("key = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRouteByHost(t *testing.T) {
	r, err := newRouter(Config{
		Default: Site{Names: nil, DefaultTTL: 1},
		Sites: []Site{
			{Names: []string{"example.com"}, DefaultTTL: 2},
			{Names: []string{"*.example.org"}, DefaultTTL: 3},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		want int
	}{
		{"example.com", 2},
		{"EXAMPLE.com:8080", 2},
		{"www.example.org", 3},
		{"example.org", 1},
		{"other.net", 1},
		{"[::1]:8080", 1},
		{"", 1},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if got := r.route([]byte(tt.host)).DefaultTTL; int(got) != tt.want {
				t.Fatalf("site ttl = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestRouterRejectsDuplicateHost(t *testing.T) {
	_, err := newRouter(Config{Sites: []Site{{Names: []string{"a.com"}}, {Names: []string{"A.com"}}}})
	if err == nil {
		t.Fatal("duplicate host accepted")
	}
}

func TestCookies(t *testing.T) {
	bypass := newPatterns([]string{"wordpress_logged_in_*", "woocommerce_cart_hash"})
	tests := []struct {
		name, header string
		bypass       bool
		lsvary       string
	}{
		{"no cookies", "", false, ""},
		{"logged in prefix", "a=1; wordpress_logged_in_abc=x", true, ""},
		{"exact name", "woocommerce_cart_hash=1", true, ""},
		{"value containing the name does not count", "x=wordpress_logged_in_1", false, ""},
		{"lscache vary value", "_lscache_vary=abc; b=2", false, "abc"},
		{"name without value", "wordpress_logged_in_=", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h fasthttp.RequestHeader
			if tt.header != "" {
				h.Set("Cookie", tt.header)
			}
			if got := hasCookie(&h, bypass); got != tt.bypass {
				t.Errorf("hasCookie = %v, want %v", got, tt.bypass)
			}
			if got := cookieValue(&h, "_lscache_vary"); string(got) != tt.lsvary {
				t.Errorf("cookieValue = %q, want %q", got, tt.lsvary)
			}
		})
	}
}

func TestAcceptEncoding(t *testing.T) {
	tests := []struct {
		header   string
		gzip, br bool
	}{
		{"", false, false},
		{"gzip", true, false},
		{"gzip, deflate, br", true, true},
		{"br;q=0, gzip", true, false},
		{"gzip;q=0.0", false, false},
		{"gzip;q=0.5", true, false},
		{"*", true, true},
		{"identity", false, false},
		{"GZIP", true, false},
		{"gzip;q=0.001", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			if got := accepts([]byte(tt.header), encGzip); got != tt.gzip {
				t.Errorf("gzip = %v, want %v", got, tt.gzip)
			}
			if got := accepts([]byte(tt.header), encBrotli); got != tt.br {
				t.Errorf("br = %v, want %v", got, tt.br)
			}
		})
	}
}

func TestETagListMatches(t *testing.T) {
	tests := []struct {
		list, etag string
		want       bool
	}{
		{`"a"`, `"a"`, true},
		{`"b", "a"`, `"a"`, true},
		{`W/"a"`, `"a"`, true},
		{`"a"`, `W/"a"`, true},
		{`*`, `"x"`, true},
		{`"b"`, `"a"`, false},
		{``, `"a"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.list+" vs "+tt.etag, func(t *testing.T) {
			if got := etagListMatches([]byte(tt.list), []byte(tt.etag)); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzAppendKey(f *testing.F) {
	f.Add("Example.com", "/a%2fb/%7e", "b=1&a=2&utm_x=3")
	f.Add("", "", "&&&=")
	drop := newPatterns([]string{"utm_*", "gclid"})
	f.Fuzz(func(t *testing.T, host, path, query string) {
		var params [][]byte
		tg := &target{[]byte("http"), []byte(host), []byte(path), []byte(query)}
		a := appendKey(nil, &params, tg, keyDrop{site: drop})
		b := appendKey(nil, &params, tg, keyDrop{site: drop})
		if string(a) != string(b) {
			t.Fatalf("key not deterministic: %q vs %q", a, b)
		}
		// Normalising a normalised path changes nothing.
		p := appendPath(nil, []byte(path))
		if q := appendPath(nil, p); string(p) != string(q) {
			t.Fatalf("path normalisation not idempotent: %q -> %q", p, q)
		}
	})
}

func FuzzAcceptEncoding(f *testing.F) {
	f.Add("gzip;q=0, br;q=0.5, *;q=0")
	f.Fuzz(func(t *testing.T, header string) {
		_ = accepts([]byte(header), encGzip)
		_ = accepts([]byte(header), encBrotli)
	})
}

// splitTarget cuts an origin-form target as fasthttp's URI parser would:
// the path as sent, the query without its '?' and without a fragment.
func FuzzSplitTargetMatchesURIParser(f *testing.F) {
	for _, s := range []string{"/", "/a?b=1", "/a?b=1#frag", "/a#frag?x", "/a?", "/?&&", "/a%3Fb?c=%23", "http://h/p?q", "*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		var req fasthttp.Request
		req.Header.SetRequestURI(target)
		req.Header.SetHost("h")
		path, query := splitTarget(&req)
		if string(path) != string(pathOf(&req)) {
			t.Errorf("%q: path %q, pathOf %q", target, path, pathOf(&req))
		}
		if want := req.URI().QueryString(); string(query) != string(want) {
			t.Errorf("%q: query %q, the URI parser's %q", target, query, want)
		}
	})
}

// Equivalent Accept-Language values select one variant; different
// preferences do not.
func TestAcceptLanguageIsNormalisedForTheVariant(t *testing.T) {
	key := func(v string) string { return string(appendSelecting(nil, "accept-language", []byte(v))) }
	same := [][]string{
		{"en-US, de;q=0.8", "en-us,de;q=0.8", "de;q=0.8, en-US", "en-US;q=1, de;q=0.80, fr;q=0"},
		{"de", " DE "},
	}
	for _, group := range same {
		for _, v := range group[1:] {
			if key(v) != key(group[0]) {
				t.Errorf("%q keys %q, %q keys %q: want one variant", v, key(v), group[0], key(group[0]))
			}
		}
	}
	if key("en, de;q=0.5") == key("de, en;q=0.5") {
		t.Error("different preferences share a variant")
	}
	if got := key("x-custom"); got != "x-custom" {
		t.Errorf("single tag keyed %q", got)
	}
	if got := string(appendSelecting(nil, "x-thing", []byte(" a , b "))); got != "a,b" {
		t.Errorf("other selecting field keyed %q, want white space removed", got)
	}
}

func FuzzAppendSelectingNeverPanics(f *testing.F) {
	f.Add("accept-language", "en-US, de;q=0.8, fr;q=0")
	f.Add("accept-language", strings.Repeat("a,", 40))
	f.Add("x", " a b ")
	f.Fuzz(func(t *testing.T, name, value string) {
		a := appendSelecting(nil, name, []byte(value))
		if b := appendSelecting(nil, name, []byte(value)); string(a) != string(b) {
			t.Fatalf("not deterministic: %q vs %q", a, b)
		}
	})
}
