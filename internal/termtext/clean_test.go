package termtext

import (
	"strings"
	"testing"
)

func TestCleanShowsControlsAsEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a.test", "a.test"},
		{"café ☕ 日本", "café ☕ 日本"},
		{"\x1b]2;pwned\x07", `\x1b]2;pwned\x07`},
		{"red\x1b[31m", `red\x1b[31m`},
		{"a\r\nb", `a\x0d\x0ab`},
		{"csi\u009b2J", `csi\x9b2J`},
		{"del\x7f", `del\x7f`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"evil\u202etxt.exe", `evil\u202etxt.exe`},
		{"a\tb", `a\x09b`},
	}
	for _, tt := range tests {
		if got := Clean(tt.in, ""); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Clean("a\tb\n\x1b", "\t\n"); got != "a\tb\n\\x1b" {
		t.Errorf("Clean keeping tabs = %q", got)
	}
}

func TestCleanAllocatesNothingForPlainText(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Clean("www.example.test/path?q=1", "") }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

func FuzzCleanLeavesNoControls(f *testing.F) {
	for _, s := range []string{"", "a.test", "\x1b[2J", "\u009b", "\xff\xfe", "\u202e", "é\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Clean(s, "")
		for _, r := range out {
			if unsafeRune(r, "") || r == 0xfffd && !strings.Contains(s, "\ufffd") {
				t.Fatalf("Clean(%q) = %q keeps %U", s, out, r)
			}
		}
		if safe(s, "") != (out == s) {
			t.Fatalf("Clean(%q) = %q: changed text that was safe, or kept text that was not", s, out)
		}
	})
}
