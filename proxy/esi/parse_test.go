package esi

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// render shows a document as text: literals as they are, includes as
// [src|alt|flags] and inlines as {name:body}.
func render(d *Document) string {
	var sb strings.Builder
	for _, s := range d.Segments {
		switch inc := s.Include; {
		case inc == nil:
			sb.Write(s.Literal)
		case inc.Inline != nil:
			fmt.Fprintf(&sb, "{%s:%s|%s|%s}", inc.Src, inc.Inline, inc.CacheControl, inc.CacheTag)
		default:
			fmt.Fprintf(&sb, "[%s|%s", inc.Src, inc.Alt)
			if inc.OnErrorContinue {
				sb.WriteString("|continue")
			}
			if inc.CacheControl != "" {
				sb.WriteString("|cc=" + inc.CacheControl)
			}
			if inc.CacheTag != "" {
				sb.WriteString("|tag=" + inc.CacheTag)
			}
			if inc.AsVar {
				sb.WriteString("|as-var")
			}
			if inc.Combine != "" {
				sb.WriteString("|combine=" + inc.Combine)
			}
			sb.WriteString("]")
		}
	}
	return sb.String()
}

func TestParse(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      string
		includes  int
		malformed int
	}{
		{"plain text", "<html><p>hi</p></html>", "<html><p>hi</p></html>", 0, 0},
		{"empty", "", "", 0, 0},
		{"include self-closing", `a<esi:include src="/f"/>b`, "a[/f|]b", 1, 0},
		{"include with close tag", `a<esi:include src="/f"></esi:include>b`, "a[/f|]b", 1, 0},
		{"include close tag after whitespace", "a<esi:include src=\"/f\">\n </esi:include>b", "a[/f|]b", 1, 0},
		{"include open only", `a<esi:include src="/f">b`, "a[/f|]b", 1, 0},
		{"single quotes", `<esi:include src='/f' alt='/g' onerror='continue'/>`, "[/f|/g|continue]", 1, 0},
		{"unquoted", `<esi:include src=/f alt=/g onerror=continue />`, "[/f|/g|continue]", 1, 0},
		{"unquoted slash self-close", `<esi:include src=/f/>x`, "[/f|]x", 1, 0},
		{"case-insensitive", `<ESI:Include SRC="/f" OnError="CONTINUE"/>`, "[/f||continue]", 1, 0},
		{"whitespace everywhere", "<esi:include\n\tsrc = \" /f \"\n  alt\t=\t'/g'   />", "[/f|/g]", 1, 0},
		{"entities", `<esi:include src="/?a=1&amp;b=2&#038;c=3&#38;d=4&#x26;e=&quot;&lt;&gt;&apos;&#65;&bogus;&"/>`,
			`[/?a=1&b=2&c=3&d=4&e="<>'A&bogus;&|]`, 1, 0},
		{"litespeed attributes", `<esi:include src='/x' cache-control='private,no-vary' cache-tag='t1' as-var='1' combine='sub' />`,
			"[/x||cc=private,no-vary|tag=t1|as-var|combine=sub]", 1, 0},
		{"litespeed plugin output",
			`<!-- lscwp admin-bar --><esi:include src='/?lsesi=admin-bar&#038;_control=private,no-vary&#038;esi=eyJ0IjoxfQ==&#038;_hash=abc' cache-control='private,no-vary' as-var='1' /><!-- lscwp admin-bar esi end -->`,
			"<!-- lscwp admin-bar -->[/?lsesi=admin-bar&_control=private,no-vary&esi=eyJ0IjoxfQ==&_hash=abc||cc=private,no-vary|as-var]<!-- lscwp admin-bar esi end -->", 1, 0},
		{"unknown attribute ignored", `<esi:include test="x" src="/f"/>`, "[/f|]", 1, 0},
		{"first duplicate wins", `<esi:include src="/a" src="/b"/>`, "[/a|]", 1, 0},
		{"attribute with > in quotes", `<esi:include src="/f?a>b"/>`, "[/f?a>b|]", 1, 0},
		{"remove", "a<esi:remove><a href=/x>x</a></esi:remove>b", "ab", 0, 0},
		{"remove case and whitespace", "a<ESI:REMOVE >x</Esi:Remove\n>b", "ab", 0, 0},
		{"remove hides includes", `a<esi:remove><esi:include src="/f"/></esi:remove>b`, "ab", 0, 0},
		{"self-closed remove", "a<esi:remove/>b", "ab", 0, 0},
		{"comment", `a<esi:comment text="hello"/>b`, "ab", 0, 0},
		{"comment with close", `a<esi:comment text="hello"></esi:comment>b`, "ab", 0, 0},
		{"esi comment", `a<!--esi <p>x</p><esi:include src="/f"/> -->b`, "a <p>x</p>[/f|] b", 1, 0},
		{"esi comment empty", `a<!--esi-->b`, "ab", 0, 0},
		{"html comment kept, markup inside ignored", `a<!-- <esi:include src="/f"/> -->b`, `a<!-- <esi:include src="/f"/> -->b`, 0, 0},
		{"html comment unterminated", `a<!-- x <esi:include src="/f"/>`, `a<!-- x <esi:include src="/f"/>`, 0, 0},
		{"esixyz comment is html", `a<!--esixyz <esi:include src="/f"/> -->b`, `a<!--esixyz <esi:include src="/f"/> -->b`, 0, 0},
		{"inline", `a<esi:inline name="/frag" cache-control="private" cache-tag="t">BODY</esi:inline>b`, "a{/frag:BODY|private|t}b", 1, 0},
		{"inline self-closed", `a<esi:inline name='/frag'/>b`, "a{/frag:||}b", 1, 0},
		{"not esi", `<esix:include src="/f"/><esi-x>`, `<esix:include src="/f"/><esi-x>`, 0, 0},

		// CDATA sections.
		{"cdata hides a closer inside remove", "a<esi:remove><![CDATA[ x </esi:remove> y ]]>z</esi:remove>b", "ab", 0, 0},
		{"cdata in remove, closer after it", "a<esi:remove><![CDATA[x]]></esi:remove>b", "ab", 0, 0},
		{"unterminated cdata in remove keeps content", "a<esi:remove>x<![CDATA[y</esi:remove>b", "ax<![CDATA[yb", 0, 2},
		{"cdata hides a closer inside inline", `a<esi:inline name="/n"><![CDATA[</esi:inline>]]></esi:inline>b`, "a{/n:<![CDATA[</esi:inline>]]>||}b", 1, 0},
		{"markup in cdata outside remove is processed", `a<![CDATA[<esi:include src="/f"/>]]>b`, "a<![CDATA[[/f|]]]>b", 1, 0},

		// Malformed: broken tags are dropped through the next '>', never
		// past the next '<', to the end when the body ends inside them.
		{"missing src dropped", `a<esi:include alt="/g"/>b`, "ab", 0, 1},
		{"empty src dropped", `a<esi:include src="  "/>b`, "ab", 0, 1},
		{"src without value dropped", `a<esi:include src />b`, "ab", 0, 1},
		{"src= with nothing dropped", `a<esi:include src=>b`, "ab", 0, 1},
		{"unquoted values", `a<esi:include src=/f?a=1&amp;b=2 alt=/g onerror=continue>b`, "a[/f?a=1&b=2|/g|continue]b", 1, 0},
		{"unquoted value with quotes inside", `a<esi:include src=/f?q="x"/>b`, `a[/f?q="x"|]b`, 1, 0},
		{"body ends inside the tag", `a<esi:include src="/f"`, "a", 0, 1},
		{"body ends inside the name", `a<esi:incl`, "a", 0, 1},
		{"body ends inside a value", `a<esi:include src="/f`, "a", 0, 1},
		{"body ends inside a stray close", "a</esi:remove b", "a", 0, 1},
		{"unterminated quote stops at <", `a<esi:include src="/f <p>b</p><esi:include src="/g"/>`, `a<p>b</p>[/g|]`, 1, 1},
		{"< inside tag", `a<esi:include src="/f" <esi:include src="/g"/>`, `a[/g|]`, 1, 1},
		{"stray slash", `a<esi:include src="/f" / x>b`, `ab`, 0, 1},
		{"garbage attributes", `a<esi:include src=/f ==="" "x" />b`, `ab`, 0, 1},
		{"no element name", `a<esi: src="/f"/>b`, `ab`, 0, 1},
		{"no element name, stray close", `a</esi:>b`, `ab`, 0, 1},
		{"unknown element dropped, content kept", `<esi:try><esi:attempt>x</esi:attempt></esi:try>`, "x", 0, 4},
		{"unknown element with attributes", `a<esi:vars name="x">y</esi:vars>b`, "ayb", 0, 2},
		{"broken unknown element", `a<esi:foo bar="1>c</esi:foo>b`, "ab", 0, 2},
		{"stray close dropped", "a</esi:remove>b</esi:include >c", "abc", 0, 2},
		{"unterminated remove keeps content", "a<esi:remove>b<esi:remove>c", "abc", 0, 2},
		{"nested remove", "a<esi:remove>x<esi:remove>y</esi:remove>z</esi:remove>b", "azb", 0, 2},
		{"unterminated inline keeps content", `a<esi:inline name="/n">b`, "ab", 0, 1},
		{"inline without name keeps body as markup", `a<esi:inline><esi:include src="/f"/></esi:inline>c`, "a[/f|]c", 1, 2},
		{"unterminated esi comment drops the opener", `a<!--esi <esi:include src="/f"/>`, "a [/f|]", 1, 1},
		{"esi comment inside esi comment", "<!--esi a<!--esi b-->c", " a bc", 0, 1},
		{"huge attribute", `a<esi:include src="` + strings.Repeat("x", 9000) + `"/>b`, `ab`, 0, 1},
		{"huge tag", `a<esi:include src="/f"` + strings.Repeat(` x="y"`, 3000) + `/>b`, `ab`, 0, 1},
		{"too many includes", strings.Repeat(`<esi:include src="/f"/>`, 5), "[/f|][/f|][/f|]", 3, 2},
		{"too many inlines keep body", strings.Repeat(`<esi:inline name="/n">b</esi:inline>`, 4), "{/n:b||}{/n:b||}{/n:b||}b", 3, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, st := Parse([]byte(tt.in), 3)
			if got := render(doc); got != tt.want {
				t.Errorf("render:\n got %q\nwant %q", got, tt.want)
			}
			if doc.Includes != tt.includes {
				t.Errorf("Includes = %d, want %d", doc.Includes, tt.includes)
			}
			if st.Malformed != tt.malformed {
				t.Errorf("Malformed = %d, want %d", st.Malformed, tt.malformed)
			}
		})
	}
}

func TestParseLiteralsReferenceBody(t *testing.T) {
	body := []byte(`abc<esi:include src="/f"/>def`)
	doc, _ := Parse(body, 0)
	if &doc.Segments[0].Literal[0] != &body[0] || cap(doc.Segments[0].Literal) != 3 {
		t.Fatal("literal segment does not reference body with a capped slice")
	}
}

func TestParseIsLinear(t *testing.T) {
	attacks := map[string]string{
		"unterminated tags":        `<esi:include src=x `,
		"unterminated quotes":      `<esi:include src="`,
		"unterminated removes":     `<esi:remove>`,
		"unterminated inlines":     `<esi:inline name=a>`,
		"unterminated esi comment": `<!--esi `,
		"attribute names":          `<esi:include aaaaaaaaaaaaaaa`,
		"stray closes":             `</esi:remove `,
		"broken tags before a '>'": `<esi:include src="x" ! `,
		"removes with cdata":       `<esi:remove><![CDATA[`,
		"cdata with removes":       `<![CDATA[<esi:remove>]]>`,
		"inlines with cdata":       `<esi:inline name=a><![CDATA[ ]]>`,
		"nested esi comments":      `<!--esi <!--esi `,
	}
	for name, unit := range attacks {
		t.Run(name, func(t *testing.T) {
			body := bytes.Repeat([]byte(unit), (1<<20)/len(unit))
			inComment := append(append([]byte("<!--esi "), body...), "-->"...)
			for _, b := range [][]byte{body, inComment} {
				start := time.Now()
				Parse(b, 0)
				if took := time.Since(start); took > 2*time.Second {
					t.Fatalf("1 MiB of %q took %v", unit, took)
				}
			}
		})
	}
}

func TestHasMarkup(t *testing.T) {
	for in, want := range map[string]bool{
		"plain": false, "<p>": false, "<ESI:include src=x/>": true, "x</esi:remove>": true, "<!--esi x-->": true, "<!-- esi -->": false,
	} {
		if got := HasMarkup([]byte(in)); got != want {
			t.Errorf("HasMarkup(%q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"", "plain <p>text</p>",
		`<esi:include src="/f" alt='/g' onerror=continue/>`,
		`<!-- lscwp admin-bar --><esi:include src='/?lsesi=admin-bar&#038;_control=private,no-vary' cache-control='private,no-vary' as-var='1' /><!-- lscwp admin-bar esi end -->`,
		"<esi:remove>x</esi:remove>", "<!--esi <esi:include src=/x/> -->", `<esi:comment text="c"/>`,
		`<esi:inline name="/n">b</esi:inline>`, "<esi:include src=\"", "<esi:remove><esi:remove></esi:remove>",
		"</esi:include>", "<!--esi", "<!-- <esi:include src=/a/>",
		"<esi:remove><![CDATA[</esi:remove>]]></esi:remove>", "<![CDATA[<esi:include src=/a/>]]>",
		`<esi:include src="/a" <esi:include src=/b/>`, "<esi:foo x=1>y</esi:foo>", "<!--esi <!--esi x-->",
	}
	for _, s := range seeds {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, body []byte, max int) {
		max = max%16 + 1
		if max <= 0 {
			max += 16
		}
		doc, _ := Parse(body, max)
		if doc.Includes > max {
			t.Fatalf("Includes = %d > max %d", doc.Includes, max)
		}
		var lit []byte
		n := 0
		for _, s := range doc.Segments {
			if s.Include != nil {
				n++
				if s.Include.Src == "" {
					t.Fatal("include without src")
				}
				continue
			}
			if len(s.Literal) == 0 {
				t.Fatal("empty literal segment")
			}
			lit = append(lit, s.Literal...)
		}
		if n != doc.Includes {
			t.Fatalf("%d include segments, Includes = %d", n, doc.Includes)
		}
		if len(lit) > len(body) {
			t.Fatalf("literals %d bytes > body %d", len(lit), len(body))
		}
		if !HasMarkup(body) && !bytes.Equal(lit, body) {
			t.Fatalf("body without markup changed:\n%q\n%q", body, lit)
		}
		for _, s := range doc.Segments {
			if at := markupOutsideComments(s.Literal); at >= 0 {
				t.Fatalf("markup left in a literal segment at %d: %q (body %q)", at, s.Literal, body)
			}
		}
	})
}

// markupOutsideComments returns where b has ESI markup that is not inside
// an HTML comment (which Parse leaves as text), or -1: a literal segment
// must have none, whatever was wrong with the markup in the body.
func markupOutsideComments(b []byte) int {
	for i := 0; i < len(b); i++ {
		r := b[i:]
		switch {
		case r[0] != '<':
		case isEsiCommentOpen(r), hasPrefixFold(r, "<esi:"), hasPrefixFold(r, "</esi:"):
			return i
		case hasPrefixFold(r, "<!--"):
			e := bytes.Index(r[4:], []byte("-->"))
			if e < 0 {
				return -1
			}
			i += 4 + e + 2
		}
	}
	return -1
}
