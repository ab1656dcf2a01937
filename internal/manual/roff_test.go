package manual

import (
	"strings"
	"testing"
)

func TestRoffRendersTheSubset(t *testing.T) {
	md := "<!-- source note -->\n# NAME\n\nramjet - a proxy\n\n## serve\n\n`--listen ADDR`\n:   Main *listener*,\n    host:port.\n\n- an **item**\n  going on\n\n```\n.starts with a dot\nback\\slash\n```\n\nSee [the docs](docs/x.md) — now.\n"
	got := Roff(md, "ramjet", "8")
	for _, want := range []string{
		".TH \"RAMJET\" 8 ",
		".SH \"NAME\"\n.PP\nramjet \\- a proxy\n",
		".SS \"serve\"\n",
		".TP\n\\fB\\-\\-listen ADDR\\fR\nMain \\fIlistener\\fR,\nhost:port.\n",
		".IP \\(bu 2\nan \\fBitem\\fR\ngoing on\n",
		".nf\n\\&.starts with a dot\nback\\eslash\n.fi\n",
		"See the docs \\[u2014] now.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Roff output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "source note") {
		t.Error("an HTML comment reached the page")
	}
}

func TestRoffKeepsEscapedMarkupLiteral(t *testing.T) {
	got := inline(`utm_\* and \[x\] and ` + "`utm_\\*`")
	if want := `utm_* and [x] and \fButm_*\fR`; got != want {
		t.Errorf("inline = %q, want %q", got, want)
	}
}
