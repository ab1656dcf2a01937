package purge

import (
	"bytes"
	"errors"
	"fmt"
)

// Limits on one purge header. A header is application output, so a bug
// (or a hostile plugin) must not turn it into unbounded work.
const (
	maxItemLen = 1 << 10 // bytes in one item after trimming
	maxTargets = 10_000  // targets per header, over all its groups
	maxErrors  = 16      // errors reported per header; the rest are counted
)

// ErrMalformed marks the parts of a purge header that were skipped.
var ErrMalformed = errors.New("purge: malformed")

// ParseHeader parses one X-LiteSpeed-Purge / X-LiteSpeed-Purge2 header
// value into one Command per ";"-group, following OpenLiteSpeed's cache
// module (processPurge2 and processPurgeCmdEx):
//
//   - a group may start with "private," or "public," (exact, case
//     sensitive: "Private," is not the keyword, so "Private" becomes a
//     plain tag, as in OLS), then "stale," (any case), which makes every
//     item of the group soft;
//   - "*" is all; "/path?q" is a URL (kept verbatim, no "~s" parsing,
//     as OLS hashes it whole); "tag=" is optional; a "~s"/"~stale" suffix
//     makes one item soft; "*rest" and "rest*" are tag wildcards;
//   - "tag=*" is all, as in OLS; "~s" alone is the tag "~s", as in OLS.
//
// Malformed items are skipped and reported in err (joined, each wrapping
// ErrMalformed and quoting the item); the well-formed ones are still
// returned, never widened. Groups with no targets yield no Command.
// Host is left empty: the caller knows which request carried the header.
func ParseHeader(value []byte) ([]Command, error) {
	var p parser
	for group := range bytes.SplitSeq(value, []byte{';'}) {
		if p.full {
			break
		}
		p.group(group)
	}
	return p.cmds, p.err()
}

// ParseKeys parses a Surrogate-Key / Cache-Tag / Cache-Group-Invalidation
// list (comma and/or space separated) into one tag Command. These headers
// have no wildcards: "*" is a literal tag. Bad keys (control characters,
// over 1 KiB) are skipped; at most 10,000 keys are kept.
func ParseKeys(value []byte, soft bool) Command {
	var cmd Command
	seen := make(map[string]struct{})
	for key := range bytes.FieldsFuncSeq(value, isKeySep) {
		if len(cmd.Targets) == maxTargets {
			break
		}
		if len(key) > maxItemLen || hasControl(key) {
			continue
		}
		if _, dup := seen[string(key)]; dup {
			continue
		}
		seen[string(key)] = struct{}{}
		cmd.Targets = append(cmd.Targets, Target{Kind: KindTag, Value: string(key), Soft: soft})
	}
	return cmd
}

func isKeySep(r rune) bool { return r == ',' || isSpace(r) }

// parser accumulates commands and errors over the groups of one header.
type parser struct {
	cmds    []Command
	errs    []error
	dropped int  // errors beyond maxErrors
	total   int  // targets over all groups
	full    bool // maxTargets reached
}

// group parses one ";"-separated group into a Command.
func (p *parser) group(g []byte) {
	g = trimSpace(g)
	var cmd Command
	if rest, ok := bytes.CutPrefix(g, []byte("private,")); ok {
		cmd.Private, g = true, rest
	} else if rest, ok := bytes.CutPrefix(g, []byte("public,")); ok {
		g = rest
	}
	g = trimSpace(g)
	stale := false
	if len(g) >= 6 && bytes.EqualFold(g[:6], []byte("stale,")) {
		stale, g = true, g[6:]
	}
	var seen map[Target]struct{} // made on the first target; most groups are short
	for item := range bytes.SplitSeq(g, []byte{','}) {
		t, ok, why := parseItem(item, stale)
		if why != "" {
			p.fail(item, why)
			continue
		}
		if _, dup := seen[t]; !ok || dup {
			continue
		}
		if p.total == maxTargets {
			p.full = true
			p.errs = append(p.errs, fmt.Errorf("%w header: more than %d targets, the rest is dropped", ErrMalformed, maxTargets))
			break
		}
		if seen == nil {
			seen = make(map[Target]struct{})
		}
		seen[t] = struct{}{}
		cmd.Targets = append(cmd.Targets, t)
		p.total++
	}
	if len(cmd.Targets) > 0 {
		p.cmds = append(p.cmds, cmd)
	}
}

// fail records a skipped item; past maxErrors it only counts, so a
// header of a million bad items costs no more than parsing it.
func (p *parser) fail(item []byte, why string) {
	if len(p.errs) >= maxErrors {
		p.dropped++
		return
	}
	p.errs = append(p.errs, fmt.Errorf("%w item %q: %s", ErrMalformed, clip(trimSpace(item)), why))
}

func (p *parser) err() error {
	if p.dropped > 0 {
		p.errs = append(p.errs, fmt.Errorf("%w: %d more errors", ErrMalformed, p.dropped))
	}
	return errors.Join(p.errs...)
}

// parseItem parses one ","-separated item. ok is false for an empty item,
// which is not an error (the plugin emits trailing commas); why says what
// is wrong with a malformed one.
func parseItem(item []byte, stale bool) (t Target, ok bool, why string) {
	item = trimSpace(item)
	switch {
	case len(item) == 0:
		return Target{}, false, ""
	case len(item) > maxItemLen:
		return Target{}, false, "longer than 1024 bytes"
	case hasControl(item):
		return Target{}, false, "control character"
	case item[0] == '/':
		return Target{Kind: KindURL, Value: string(item), Soft: stale}, true, ""
	}
	name, soft := cutStale(item)
	name = trimSpace(bytes.TrimPrefix(name, []byte("tag=")))
	t = Target{Soft: stale || soft}
	switch n := len(name); {
	case n == 0:
		return Target{}, false, "empty tag"
	case n == 1 && name[0] == '*':
		t.Kind = KindAll
	case name[0] == '*' && name[n-1] == '*':
		return Target{}, false, "wildcard at both ends"
	case name[0] == '*':
		t.Kind, t.Value = KindTagSuffix, string(name[1:])
	case name[n-1] == '*':
		t.Kind, t.Value = KindTagPrefix, string(name[:n-1])
	default:
		t.Kind, t.Value = KindTag, string(name)
	}
	return t, true, ""
}

// cutStale strips a per-item "~s" or "~stale" (any case). Like OLS it
// needs a name before the suffix: "~s" alone is a name, not a flag.
func cutStale(item []byte) ([]byte, bool) {
	n := len(item)
	if n > 2 && item[n-2] == '~' && item[n-1]|0x20 == 's' {
		return item[:n-2], true
	}
	if n > 6 && bytes.EqualFold(item[n-6:], []byte("~stale")) {
		return item[:n-6], true
	}
	return item, false
}

// isSpace is C isspace in the C locale, which OLS trims with.
func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r'
}

func trimSpace(b []byte) []byte { return bytes.TrimFunc(b, isSpace) }

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// clip keeps error messages short when an item is huge.
func clip(b []byte) string {
	const n = 64
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
