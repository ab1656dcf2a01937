package main_test

// End-to-end tests of malformed ESI markup (issue 14, section 6), as
// page.php serves it through the real nginx + php-fpm origin and the
// built binary: each case is a behaviour proxy/esi/doc.go documents (the
// Varnish way: the page is served, broken markup is dropped or left as
// text in a defined way, never a 5xx), checked byte for byte where the
// markup was, on a miss and on a hit, and once more with the page gzipped
// by the script itself.

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// inPlace is what stands between page.php's start and the marker after
// m1, fragment blocks shortened to "[frag NAME]".
func inPlace(t testing.TB, r result, what string) string {
	t.Helper()
	body := string(r.Body)
	const start, end = "<p>page-start</p>\n", "<p>after-m1</p>"
	i, j := strings.Index(body, start), strings.Index(body, end)
	if i < 0 || j < i {
		t.Fatalf("%s: page start or the marker after m1 lost; body %.400q", what, body)
	}
	return shortFrags(body[i+len(start) : j])
}

var fragBlock = regexp.MustCompile(`\[frag name=(\S+) [^\]]*\]`)

func shortFrags(s string) string { return fragBlock.ReplaceAllString(s, "[frag $1]") }

func TestESIMalformedMarkupIsServedAsDocumented(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	good := incl("/esi/pub.php?name=good")
	tests := []struct {
		name, markup, want string
		comments           bool // the case leaves markup inside an HTML comment, as text
	}{
		{name: "bogus-element-tags-dropped-content-kept", markup: `a<esi:foo bar="1">inner</esi:foo>b`, want: "ainnerb"},
		{name: "bogus-self-closing-element-dropped", markup: `a<esi:vars/>b`, want: "ab"},
		{name: "broken-bogus-element-dropped-through-gt", markup: `a<esi:bogus !x>b`, want: "ab"},
		{name: "unquoted-attributes-accepted", markup: `a<esi:include src=/esi/pub.php?name=unquoted onerror=continue />b`, want: "a[frag unquoted]b"},
		{name: "unquoted-value-self-closes", markup: `a<esi:include src=/esi/pub.php?name=selfclose/>b`, want: "a[frag selfclose]b"},
		{name: "include-without-src-dropped", markup: `a<esi:include alt="/esi/alt.php"/>b`, want: "ab"},
		{name: "src-without-value-dropped", markup: `a<esi:include src/>b`, want: "ab"},
		{name: "empty-src-dropped", markup: `a<esi:include src=""/>b`, want: "ab"},
		{name: "unclosed-include-element-included", markup: `a<esi:include src="/esi/pub.php?name=open">b`, want: "a[frag open]b"},
		{name: "unterminated-tag-dropped-up-to-the-next-tag", markup: `a<esi:include src="/esi/pub.php?name=unterm"<b>kept</b>`, want: "a<b>kept</b>"},
		{name: "unbalanced-quote-dropped-up-to-the-next-tag", markup: `a<esi:include src="/esi/pub.php?name=q' /><b>kept</b>`, want: "a<b>kept</b>"},
		{name: "stray-character-in-tag-dropped-through-gt", markup: `a<esi:include src="/esi/pub.php?name=stray" !>b`, want: "ab"},
		{name: "lt-inside-a-tag-keeps-the-next-tag", markup: `a<esi:include src="/x" <esi:include src="/esi/pub.php?name=next"/>b`, want: "a[frag next]b"},
		{name: "stray-end-tags-dropped", markup: `a</esi:remove>b</esi:include>c</esi:bogus >d`, want: "abcd"},
		{name: "broken-stray-end-tag-dropped-through-gt", markup: `a</esi:remove x>b`, want: "ab"},
		{name: "unclosed-remove-keeps-its-content", markup: `a<esi:remove><b>fallback</b>`, want: "a<b>fallback</b>"},
		{name: "cdata-in-remove-hides-a-closer", markup: `a<esi:remove><![CDATA[ </esi:remove> ]]>removed</esi:remove>b`, want: "ab"},
		{name: "nested-remove-ends-at-the-first-closer", markup: `a<esi:remove>x<esi:remove>y</esi:remove>z</esi:remove>b`, want: "azb"},
		{name: "unterminated-esi-comment-loses-its-opener", markup: `a<!--esi <b>in</b>`, want: "a <b>in</b>"},
		{name: "markup-in-cdata-outside-remove-processed", markup: `a<![CDATA[<esi:include src="/esi/pub.php?name=cdata"/>]]>b`, want: "a<![CDATA[[frag cdata]]]>b"},
		{name: "html-comment-left-as-text", markup: `a<!-- <esi:include src="/esi/pub.php?name=no"/> -->b`, want: `a<!-- <esi:include src="/esi/pub.php?name=no"/> -->b`, comments: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, enc := range []string{"", "gzip"} {
				u := rj.URL + esiPage("", []string{tt.markup, good}, "case="+tt.name, "enc="+enc)
				for _, step := range []string{"miss", "hit"} {
					what := step + " (enc=" + enc + ")"
					r := get(t, c, u)
					mustIntactPage(t, r, 2, what)
					if got := inPlace(t, r, what); got != tt.want {
						t.Fatalf("%s: in place of the markup %q, want %q", what, got, tt.want)
					}
					if !tt.comments {
						mustNoMarkup(t, r, what)
					}
					mustFrag(t, r, "good", what+": the include after the malformed markup")
				}
			}
		})
	}
}

// A body that ends inside a tag (or a block) loses the tag, as in
// Varnish; the page before it is intact.
func TestESIPageThatEndsInsideATagIsServed(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	const end = "<p>page-end</p></body></html>\n"
	tests := []struct{ name, tail, want string }{
		{"ends-inside-an-include-tag", `<esi:include src="/esi/pub.php?name=end"`, ""},
		{"ends-inside-a-quoted-value", `<esi:include src="/esi/pub`, ""},
		{"ends-inside-an-element-name", `<esi:incl`, ""},
		{"ends-after-esi-colon", `<esi:`, ""},
		{"ends-inside-an-end-tag", `</esi:remo`, ""},
		{"ends-inside-an-esi-comment", `<!--esi <b>x</b>`, " <b>x</b>"},
		{"ends-inside-an-unclosed-remove", `<esi:remove><b>fallback</b>`, "<b>fallback</b>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, enc := range []string{"", "gzip"} {
				u := rj.URL + esiPage("", []string{incl("/esi/pub.php?name=good")}, "case="+tt.name, "enc="+enc, "tail="+url.QueryEscape(tt.tail))
				for _, step := range []string{"miss", "hit"} {
					what := step + " (enc=" + enc + ")"
					r := get(t, c, u)
					mustStatus(t, r, http.StatusOK, what)
					if !strings.HasSuffix(string(r.Body), end+tt.want) {
						t.Fatalf("%s: body ends %q, want %q", what, tail(r.Body, 100), end+tt.want)
					}
					mustNoMarkup(t, r, what)
					mustFrag(t, r, "good", what)
				}
			}
		})
	}
}
