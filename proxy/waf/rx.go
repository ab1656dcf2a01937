package waf

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"

	"github.com/corazawaf/coraza/v3/experimental/plugins"
	"github.com/corazawaf/coraza/v3/experimental/plugins/plugintypes"
	re2 "github.com/wasilibs/go-re2"
	"rsc.io/binaryregexp"
)

// longInput is the value length from which @rx runs on RE2 rather than
// Go's regexp. The CRS's patterns are large alternations that Go's NFA
// walks at about 2 MB/s (a 2 KiB form field took ~1 ms per pattern, 14
// ms per POST); RE2's DFA does the same in µs, but each call into it
// costs ~0.3–0.6 µs, more than Go's backtracker needs for a short
// header. Measured with BenchmarkInspect (README, WAF).
const longInput = 32

// captures is how many groups a match copies to TX.0–TX.9, as
// ModSecurity does.
const captures = 10

func init() {
	// Replaces Coraza's @rx for every rule set this process compiles.
	plugins.RegisterOperator("rx", newRX)
}

// rx is the @rx operator: the same RE2-syntax pattern compiled twice,
// for Go's regexp (short values, and values that are not UTF-8, at
// which RE2 would stop reading and let a payload behind a stray byte
// through) and for RE2 (long values). A pattern written for raw bytes
// (\xNN escapes that are not UTF-8) runs on binaryregexp only.
type rx struct {
	minLen int // no shorter value can match
	short  *regexp.Regexp
	long   *re2.Regexp
	bytes  *binaryregexp.Regexp
}

func newRX(o plugintypes.OperatorOptions) (plugintypes.Operator, error) {
	// Dot matches newlines and ^/$ match at lines, as Coraza's own @rx.
	pattern := "(?sm)" + o.Arguments
	compile := func() (any, error) { return compileRX(pattern) }
	if o.Memoizer == nil {
		o.Memoizer = onceOnly{}
	}
	v, err := o.Memoizer.Do("ramjet-rx:"+pattern, compile)
	if err != nil {
		return nil, err
	}
	return v.(*rx), nil
}

func compileRX(pattern string) (*rx, error) {
	if matchesRawBytes(pattern) {
		b, err := binaryregexp.Compile(pattern)
		if err != nil {
			return nil, fmt.Errorf("@rx %q: %w", pattern, err)
		}
		return &rx{bytes: b}, nil
	}
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("@rx %q: %w", pattern, err)
	}
	short, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("@rx %q: %w", pattern, err)
	}
	long, err := re2.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("@rx %q (RE2): %w", pattern, err)
	}
	return &rx{minLen: minLength(tree), short: short, long: long}, nil
}

func (o *rx) Evaluate(tx plugintypes.TransactionState, value string) bool {
	if o.bytes != nil {
		return o.evalBytes(tx, value)
	}
	if len(value) < o.minLen {
		return false
	}
	useRE2 := len(value) >= longInput && utf8.ValidString(value)
	// Most values do not match, and a match without groups is the
	// cheaper search in both engines: groups only for what matched.
	if useRE2 {
		if !o.long.MatchString(value) {
			return false
		}
		if tx.Capturing() {
			capture(tx, value, o.long.FindStringSubmatchIndex(value))
		}
		return true
	}
	if !o.short.MatchString(value) {
		return false
	}
	if tx.Capturing() {
		capture(tx, value, o.short.FindStringSubmatchIndex(value))
	}
	return true
}

func (o *rx) evalBytes(tx plugintypes.TransactionState, value string) bool {
	if !tx.Capturing() {
		return o.bytes.MatchString(value)
	}
	return capture(tx, value, o.bytes.FindStringSubmatchIndex(value))
}

// capture copies the groups of match m (index pairs, nil when none) to
// the transaction, a group that took no part as "".
func capture(tx plugintypes.TransactionState, value string, m []int) bool {
	if m == nil {
		return false
	}
	for i := 0; i < len(m)/2 && i < captures; i++ {
		if m[2*i] < 0 {
			tx.CaptureField(i, "")
			continue
		}
		tx.CaptureField(i, value[m[2*i]:m[2*i+1]])
	}
	return true
}

// onceOnly is the memoizer of an operator compiled outside a rule set
// (tests): it remembers nothing.
type onceOnly struct{}

func (onceOnly) Do(_ string, fn func() (any, error)) (any, error) { return fn() }
