package purge

import (
	"bytes"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func tagTarget(v string) Target     { return Target{Kind: KindTag, Value: v} }
func softTagTarget(v string) Target { return Target{Kind: KindTag, Value: v, Soft: true} }
func allTarget() Target             { return Target{Kind: KindAll} }
func urlTarget(v string) Target     { return Target{Kind: KindURL, Value: v} }
func pubCmd(ts ...Target) Command {
	return Command{Targets: ts}
}
func privCmd(ts ...Target) Command {
	return Command{Targets: ts, Private: true}
}

func TestParseHeaderLSCacheExamples(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Command
	}{
		{"all", "*", []Command{pubCmd(allTarget())}},
		{"private all", "private, *", []Command{privCmd(allTarget())}},
		{"private all no space", "private,*", []Command{privCmd(allTarget())}},
		{"two tags", "tag=Cat1, tag=Page2", []Command{pubCmd(tagTarget("Cat1"), tagTarget("Page2"))}},
		{"private tag", "private, tag=Cat1", []Command{privCmd(tagTarget("Cat1"))}},
		{"url", "/phpinfo.php", []Command{pubCmd(urlTarget("/phpinfo.php"))}},
		{"url with query", "/a/b?x=1", []Command{pubCmd(urlTarget("/a/b?x=1"))}},
		{"public and private groups",
			"public, tag=pubtag1, tag=pubtag2; private, tag=privtag1, tag=privtag2",
			[]Command{pubCmd(tagTarget("pubtag1"), tagTarget("pubtag2")), privCmd(tagTarget("privtag1"), tagTarget("privtag2"))}},
		{"stale groups",
			"public, stale, tag=pubtag1; private, stale, tag=privtag1",
			[]Command{pubCmd(softTagTarget("pubtag1")), privCmd(softTagTarget("privtag1"))}},
		{"plugin stale output", "public,stale,368_Po.12,368_T.3",
			[]Command{pubCmd(softTagTarget("368_Po.12"), softTagTarget("368_T.3"))}},
		{"plugin purge all is the site tag", "public,368_", []Command{pubCmd(tagTarget("368_"))}},
		{"plugin public and private", "public,368_Po.1;private,368_W.x",
			[]Command{pubCmd(tagTarget("368_Po.1")), privCmd(tagTarget("368_W.x"))}},
	}
	runParse(t, tests)
}

func TestParseHeaderItems(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Command
	}{
		{"empty header", "", nil},
		{"only separators", " ;;, ,; ", nil},
		{"keyword only group", "public,;private,", nil},
		{"duplicate separators", "a,,b;;c", []Command{pubCmd(tagTarget("a"), tagTarget("b")), pubCmd(tagTarget("c"))}},
		{"trailing comma", "public,a,", []Command{pubCmd(tagTarget("a"))}},
		{"whitespace around items", "  a ,\tb  ;  private,   c ", []Command{pubCmd(tagTarget("a"), tagTarget("b")), privCmd(tagTarget("c"))}},
		{"case kept", "Tag=X,tag=MiXeD", []Command{pubCmd(tagTarget("Tag=X"), tagTarget("MiXeD"))}},
		{"stale any case", "STALE,a", []Command{pubCmd(softTagTarget("a"))}},
		{"public then mixed case stale", "public, Stale, a", []Command{pubCmd(softTagTarget("a"))}},
		{"stale without public", "stale,a,*", []Command{pubCmd(softTagTarget("a"), Target{Kind: KindAll, Soft: true})}},
		{"Private is not the keyword", "Private, tag=x", []Command{pubCmd(tagTarget("Private"), tagTarget("x"))}},
		{"Public is not the keyword", "Public,x", []Command{pubCmd(tagTarget("Public"), tagTarget("x"))}},
		{"private without comma is a tag", "private", []Command{pubCmd(tagTarget("private"))}},
		{"item stale ~s", "a~s,b~S,c~stale,d~STALE", []Command{pubCmd(softTagTarget("a"), softTagTarget("b"), softTagTarget("c"), softTagTarget("d"))}},
		{"item stale with tag=", "tag=a~s", []Command{pubCmd(softTagTarget("a"))}},
		{"~s alone is a tag", "~s", []Command{pubCmd(tagTarget("~s"))}},
		{"~stale alone is a tag", "~stale", []Command{pubCmd(tagTarget("~stale"))}},
		{"star stale", "*~s", []Command{pubCmd(Target{Kind: KindAll, Soft: true})}},
		{"tag=* is all as in OLS", "tag=*", []Command{pubCmd(allTarget())}},
		{"suffix wildcard", "*_Po.1", []Command{pubCmd(Target{Kind: KindTagSuffix, Value: "_Po.1"})}},
		{"prefix wildcard", "368_*", []Command{pubCmd(Target{Kind: KindTagPrefix, Value: "368_"})}},
		{"prefix wildcard soft", "tag=368_*~s", []Command{pubCmd(Target{Kind: KindTagPrefix, Value: "368_", Soft: true})}},
		{"star inside is literal", "a*b", []Command{pubCmd(tagTarget("a*b"))}},
		{"url keeps ~s", "/a~s", []Command{pubCmd(urlTarget("/a~s"))}},
		{"url in stale group is soft", "stale,/a", []Command{pubCmd(Target{Kind: KindURL, Value: "/a", Soft: true})}},
		{"tag=/x is a tag", "tag=/x", []Command{pubCmd(tagTarget("/x"))}},
		{"private url", "private,/a", []Command{privCmd(urlTarget("/a"))}},
		{"duplicates collapse", "a,a,tag=a", []Command{pubCmd(tagTarget("a"))}},
		{"utf8 kept", "catégorie", []Command{pubCmd(tagTarget("catégorie"))}},
	}
	runParse(t, tests)
}

func runParse(t *testing.T, tests []struct {
	name, in string
	want     []Command
}) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHeader([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseHeader(%q) error: %v", tt.in, err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseHeader(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseHeaderSkipsMalformedItems(t *testing.T) {
	long := strings.Repeat("x", maxItemLen+1)
	tests := []struct {
		name, in string
		want     []Command
		errHas   string
	}{
		{"empty tag=", "tag=,a", []Command{pubCmd(tagTarget("a"))}, `"tag="`},
		{"empty tag= stale", "tag=~s,a", []Command{pubCmd(tagTarget("a"))}, "empty tag"},
		{"control char", "a\x01b,c", []Command{pubCmd(tagTarget("c"))}, "control character"},
		{"del char", "a\x7f,c", []Command{pubCmd(tagTarget("c"))}, "control character"},
		{"too long", long + ",c", []Command{pubCmd(tagTarget("c"))}, "longer than"},
		{"both wildcards", "*a*,b", []Command{pubCmd(tagTarget("b"))}, "both ends"},
		{"double star", "**,b", []Command{pubCmd(tagTarget("b"))}, "both ends"},
		{"bad item never becomes all", "private,tag=", nil, "empty tag"},
		{"group survives its neighbour", "tag=;b", []Command{pubCmd(tagTarget("b"))}, "empty tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHeader([]byte(tt.in))
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("err = %v, want ErrMalformed containing %q", err, tt.errHas)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseHeaderCapsTargets(t *testing.T) {
	var b bytes.Buffer
	for i := range maxTargets + 5 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("t" + strconv.Itoa(i))
	}
	got, err := ParseHeader(b.Bytes())
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
	n := 0
	for _, c := range got {
		n += len(c.Targets)
	}
	if n != maxTargets {
		t.Fatalf("kept %d targets, want %d", n, maxTargets)
	}
}

func TestParseHeaderBoundsErrors(t *testing.T) {
	in := strings.Repeat("tag=,", 1000)
	_, err := ParseHeader([]byte(in))
	if err == nil || strings.Count(err.Error(), "\n") > maxErrors+1 {
		t.Fatalf("want at most %d error lines, got %v", maxErrors+1, err)
	}
	if !strings.Contains(err.Error(), "more errors") {
		t.Fatalf("err %v does not count the dropped errors", err)
	}
}

func TestParseKeys(t *testing.T) {
	tests := []struct {
		name, in string
		soft     bool
		want     []Target
	}{
		{"empty", "", false, nil},
		{"comma", "a,b", false, []Target{tagTarget("a"), tagTarget("b")}},
		{"space", "a b  c", false, []Target{tagTarget("a"), tagTarget("b"), tagTarget("c")}},
		{"mixed", " a, b ,c\td ", false, []Target{tagTarget("a"), tagTarget("b"), tagTarget("c"), tagTarget("d")}},
		{"soft", "a", true, []Target{softTagTarget("a")}},
		{"star is literal", "*", false, []Target{tagTarget("*")}},
		{"duplicates", "a a,a", false, []Target{tagTarget("a")}},
		{"control skipped", "a\x01,b", false, []Target{tagTarget("b")}},
		{"long skipped", strings.Repeat("x", maxItemLen+1) + " b", false, []Target{tagTarget("b")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseKeys([]byte(tt.in), tt.soft)
			if !reflect.DeepEqual(got.Targets, tt.want) {
				t.Fatalf("ParseKeys(%q) = %+v, want %+v", tt.in, got.Targets, tt.want)
			}
			if got.Private || got.Host != "" {
				t.Fatalf("ParseKeys set scope: %+v", got)
			}
		})
	}
}

// hasStandaloneStar is the fuzz oracle: some item, after the optional
// "tag=" and "~s"/"~stale" decorations, is exactly "*".
func hasStandaloneStar(in []byte) bool {
	for _, part := range bytes.FieldsFunc(in, func(r rune) bool { return r == ',' || r == ';' }) {
		p := bytes.TrimFunc(part, isSpace)
		for _, suf := range []string{"~s", "~S", "~stale"} {
			if len(p) > len(suf) && strings.EqualFold(string(p[len(p)-len(suf):]), suf) {
				p = p[:len(p)-len(suf)]
				break
			}
		}
		p = bytes.TrimFunc(bytes.TrimPrefix(p, []byte("tag=")), isSpace)
		if string(p) == "*" {
			return true
		}
	}
	return false
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"*", "private, *", "tag=Cat1, tag=Page2", "/phpinfo.php",
		"public, stale, tag=pubtag1; private, stale, tag=privtag1", "public,stale,368_Po.12,368_T.3",
		"public,368_", "tag=,*~s,a*,*b,**", "STALE,;;,~s", "tag=*~stale"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		cmds, _ := ParseHeader(in)
		star := hasStandaloneStar(in)
		parts := bytes.Count(in, []byte(",")) + bytes.Count(in, []byte(";")) + 1
		n := 0
		for _, c := range cmds {
			if len(c.Targets) == 0 {
				t.Fatalf("empty command from %q", in)
			}
			for _, tg := range c.Targets {
				n++
				if tg.Kind == KindAll && !star {
					t.Fatalf("%q widened to all", in)
				}
				if tg.Kind != KindAll && tg.Value == "" {
					t.Fatalf("%q gave an empty %v target", in, tg.Kind)
				}
			}
		}
		if n > parts {
			t.Fatalf("%q: %d targets from %d parts", in, n, parts)
		}
	})
}

func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{"a b,c", "", " , ", "*", "a\x00b c"} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, soft bool) {
		cmd := ParseKeys(in, soft)
		for _, tg := range cmd.Targets {
			if tg.Kind != KindTag || tg.Soft != soft || tg.Value == "" || hasControl([]byte(tg.Value)) {
				t.Fatalf("ParseKeys(%q) gave %+v", in, tg)
			}
			if strings.ContainsAny(tg.Value, ", ") || !bytes.Contains(in, []byte(tg.Value)) {
				t.Fatalf("ParseKeys(%q) gave %q, not a key of the input", in, tg.Value)
			}
		}
	})
}
