package manual

import (
	"reflect"
	"testing"
)

func TestBlocksFindsFencesWithInfoLineAndIndent(t *testing.T) {
	md := "text\n```yaml\nlisten: \":80\"\norigin:\n  servers: []\n```\n\n1. step\n   ```sh\n   ramjet version\n     --x\n   ```\n~~~\n```\n~~~\n"
	got := Blocks(md)
	want := []Block{
		{Info: "yaml", Line: 3, Body: "listen: \":80\"\norigin:\n  servers: []\n"},
		{Info: "sh", Line: 10, Body: "ramjet version\n  --x\n"},
		{Info: "", Line: 14, Body: "```\n"}, // a shorter or other fence does not close
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Blocks = %#v\nwant %#v", got, want)
	}
}

func TestLinksSkipCodeSpansAndBlocks(t *testing.T) {
	md := "see [a](a.md#x) and `[b](b.md)`\n```\n[c](c.md)\n```\n[d](../d/)\n"
	got := Links(md)
	want := []Link{{Line: 1, Target: "a.md#x"}, {Line: 5, Target: "../d/"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Links = %v, want %v", got, want)
	}
}

func TestAnchorsAreGitHubs(t *testing.T) {
	md := "# .htaccess\n## TLS and HTTP/2\n## Disk tier: a cache that survives a restart\n## Notes\n## Notes\n```\n# not a heading\n```\n"
	got := Anchors(md)
	for _, a := range []string{"htaccess", "tls-and-http2", "disk-tier-a-cache-that-survives-a-restart", "notes", "notes-1"} {
		if !got[a] {
			t.Errorf("no anchor %q in %v", a, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment in a code block made an anchor")
	}
}
