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

		// Malformed.
		{"missing src dropped", `a<esi:include alt="/g"/>b`, "ab", 0, 1},
		{"empty src dropped", `a<esi:include src="  "/>b`, "ab", 0, 1},
		{"unterminated tag at end", `a<esi:include src="/f"`, `a<esi:include src="/f"`, 0, 1},
		{"unterminated quote stops at <", `a<esi:include src="/f <p>b</p><esi:include src="/g"/>`, `a<esi:include src="/f <p>b</p>[/g|]`, 1, 1},
		{"< inside tag", `a<esi:include src="/f" <esi:include src="/g"/>`, `a<esi:include src="/f" [/g|]`, 1, 1},
		{"stray slash", `a<esi:include src="/f" / x>b`, `a<esi:include src="/f" / x>b`, 0, 1},
		{"no element name", `a<esi: src="/f"/>b`, `a<esi: src="/f"/>b`, 0, 1},
		{"unknown element dropped, content kept", `<esi:try><esi:attempt>x</esi:attempt></esi:try>`, "x", 0, 4},
		{"stray close dropped", "a</esi:remove>b</esi:include >c", "abc", 0, 2},
		{"stray close unterminated", "a</esi:remove b", "a</esi:remove b", 0, 1},
		{"unterminated remove keeps content", "a<esi:remove>b<esi:remove>c", "abc", 0, 2},
		{"nested remove", "a<esi:remove>x<esi:remove>y</esi:remove>z</esi:remove>b", "azb", 0, 2},
		{"unterminated inline keeps content", `a<esi:inline name="/n">b`, "ab", 0, 1},
		{"inline without name keeps body", `a<esi:inline>b</esi:inline>c`, "abc", 0, 1},
		{"unterminated esi comment", `a<!--esi <esi:include src="/f"/>`, "a<!--esi [/f|]", 1, 1},
		{"esi comment inside esi comment", "<!--esi a<!--esi b-->c", " a<!--esi bc", 0, 0},
		{"huge attribute", `a<esi:include src="` + strings.Repeat("x", 9000) + `"/>b`,
			`a<esi:include src="` + strings.Repeat("x", 9000) + `"/>b`, 0, 1},
		{"too many includes", strings.Repeat(`<esi:include src="/f"/>`, 5), "[/f|][/f|][/f|]", 3, 2},
		{"too many inlines keep body", strings.Repeat(`<esi:inline name="/n">b</esi:inline>`, 4), "{/n:b||}{/n:b||}{/n:b||}b", 3, 1},
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
	})
}
