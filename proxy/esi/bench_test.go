package esi

import (
	"context"
	"io"
	"strings"
	"testing"
)

// benchPage is a 30 KB page with 3 includes (2 public, 1 private in the
// LiteSpeed plugin's markup).
func benchPage() []byte {
	filler := strings.Repeat(`<div class="post"><p>Lorem ipsum dolor sit amet, <a href="/x">consectetur</a> adipiscing elit.</p></div>`+"\n", 100)
	page := "<!DOCTYPE html><html><head><title>t</title></head><body>" +
		`<esi:include src="/header" />` + filler +
		`<!-- lscwp admin-bar --><esi:include src='/?lsesi=admin-bar&#038;_control=private,no-vary&#038;esi=eyJ0IjoxfQ==&#038;_hash=abc' cache-control='private,no-vary' as-var='1' /><!-- lscwp admin-bar esi end -->` +
		filler + `<esi:include src="/footer"/>` + filler[:2000] + "</body></html>"
	return []byte(page)
}

func BenchmarkParse(b *testing.B) {
	body := benchPage()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if doc, _ := Parse(body, 0); doc.Includes != 3 {
			b.Fatal(doc.Includes)
		}
	}
}

func BenchmarkAssemble(b *testing.B) {
	doc, _ := Parse(benchPage(), 0)
	header, private, footer := []byte("<header>site</header>"), []byte("<div>hello, admin</div>"), []byte("<footer>f</footer>")
	fetch := func(_ context.Context, inc *Include, src string, _ int) ([]byte, error) {
		switch {
		case src == "/header":
			return header, nil
		case src == "/footer":
			return footer, nil
		default:
			return private, nil
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Assemble(ctx, io.Discard, doc, fetch, AssembleConfig{}); err != nil {
			b.Fatal(err)
		}
	}
}
