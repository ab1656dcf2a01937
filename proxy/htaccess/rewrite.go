package htaccess

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// rewriteConf is one scope's mod_rewrite configuration.
type rewriteConf struct {
	engine, engineSet bool
	base              string // RewriteBase; "" unset
	inherit           int    // 0, inheritAfter or inheritBefore
	rules             []*rule
	// pending holds conditions waiting for their rule while parsing.
	pending []*cond
}

const (
	inheritAfter = 1 + iota
	inheritBefore
)

// rule is one RewriteRule with the conditions before it.
type rule struct {
	at     string // FILE:LINE, for logs
	conds  []*cond
	re     *regexp.Regexp
	m      matcher
	negate bool
	subst  template
	dash   bool // "-": no substitution
	caps   bool // $N used: match with captures
	// condCaps: %N used, so regex conditions keep their captures.
	condCaps bool
	flags    ruleFlags
	env      []envAssign
	cookies  []cookieFlag
	// litespeed: inside <IfModule LiteSpeed>, read in proxy mode too.
	litespeed bool
	// unknown names a variable the rule or its conditions read that
	// ramjet cannot expand ("%{X}"); "" for none. Such a rule fails
	// closed (Outcome.undecidable): never evaluated against "".
	unknown string
	// undecided is why it fails closed, "FILE:LINE: …", for the log.
	undecided string
}

type ruleFlags struct {
	last, end, chain, forbidden, gone, qsa, qsd, qsl, ne, b, next, proxy bool
	redirect                                                             int // 0: none, else the status
	skip                                                                 int
	mime                                                                 string // T=
}

// envAssign is E=NAME:VALUE, E=!NAME (unset), or a SetEnv.
type envAssign struct {
	name  string
	value template
	unset bool
}

// cookieFlag is CO=NAME:VALUE:DOMAIN[:LIFETIME[:PATH[:SECURE[:HTTPONLY]]]].
type cookieFlag struct {
	name, value      template
	domain, path     string
	lifetime         int // minutes; 0: session cookie
	secure, httpOnly bool
}

// cond is one RewriteCond.
type cond struct {
	test    template
	kind    condKind
	negate  bool
	nc, or  bool
	re      *regexp.Regexp
	m       matcher
	operand template // for comparisons
}

type condKind uint8

const (
	condRegex  condKind = iota
	condDir             // -d
	condFile            // -f, -F
	condSize            // -s
	condLink            // -l, -L, -h
	condExists          // -e, -U
	condExec            // -x
	condStrLT           // <
	condStrGT           // >
	condStrEQ           // =
	condStrLE           // <=
	condStrGE           // >=
	condIntEQ           // -eq
	condIntNE           // -ne
	condIntLT           // -lt
	condIntLE           // -le
	condIntGT           // -gt
	condIntGE           // -ge
)

var fileTests = map[string]condKind{
	"-d": condDir, "-f": condFile, "-F": condFile, "-s": condSize, "-l": condLink, "-L": condLink,
	"-h": condLink, "-e": condExists, "-U": condExists, "-x": condExec,
}

var intTests = map[string]condKind{
	"-eq": condIntEQ, "-ne": condIntNE, "-lt": condIntLT, "-le": condIntLE, "-gt": condIntGT, "-ge": condIntGE,
}

// compileRegex compiles an Apache (PCRE) pattern for Go's RE2: a
// backslash before a character that needs none ("\ ", "\-" inside
// words) is dropped, as PCRE reads it as the character. What RE2 cannot
// do (look-around, back-references in the pattern) is an error.
func compileRegex(pat string, nocase bool) (*regexp.Regexp, error) {
	var b strings.Builder
	if nocase {
		b.WriteString("(?i)")
	}
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		if c != '\\' || i+1 >= len(pat) {
			b.WriteByte(c)
			continue
		}
		n := pat[i+1]
		i++
		switch {
		case n >= '1' && n <= '9':
			return nil, fmt.Errorf("back-reference \\%c in a pattern is not supported", n)
		case isAlnum(n) || isPunct(n):
			b.WriteByte('\\')
			b.WriteByte(n)
		default:
			b.WriteString(regexp.QuoteMeta(string(n)))
		}
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("cannot compile regular expression %q: %w", pat, err)
	}
	return re, nil
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isPunct(c byte) bool {
	return '!' <= c && c <= '/' || ':' <= c && c <= '@' || '[' <= c && c <= '`' || '{' <= c && c <= '~'
}

// parseCond reads RewriteCond's arguments.
func parseCond(args []string) (*cond, error) {
	if len(args) < 2 || len(args) > 3 {
		return nil, fmt.Errorf("RewriteCond: bad argument line")
	}
	c := &cond{}
	if len(args) == 3 {
		if err := flagList(args[2], func(k, v string) error {
			switch strings.ToLower(k) {
			case "nc", "nocase":
				c.nc = true
			case "or", "ornext":
				c.or = true
			case "nv", "novary":
			default:
				return fmt.Errorf("RewriteCond: unknown flag %q", k)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	t, err := parseTemplate(args[0])
	if err != nil {
		return nil, fmt.Errorf("RewriteCond: %w", err)
	}
	c.test = t
	pat := args[1]
	if strings.HasPrefix(pat, "!") {
		c.negate, pat = true, pat[1:]
	}
	if k, ok := fileTests[pat]; ok {
		c.kind = k
		return c, nil
	}
	if _, ok := intTests[strings.ToLower(pat)]; ok {
		return nil, fmt.Errorf("RewriteCond: %s needs a value", pat)
	}
	if op, rest, ok := cutIntTest(pat); ok {
		c.kind = op
		c.operand, err = parseTemplate(rest)
		return c, err
	}
	for _, op := range []struct {
		p string
		k condKind
	}{{"<=", condStrLE}, {">=", condStrGE}, {"<", condStrLT}, {">", condStrGT}, {"=", condStrEQ}} {
		if rest, ok := strings.CutPrefix(pat, op.p); ok {
			c.kind = op.k
			c.operand, err = parseTemplate(rest)
			return c, err
		}
	}
	if strings.HasPrefix(strings.ToLower(args[0]), "expr") {
		return nil, fmt.Errorf("RewriteCond: expr conditions are not supported")
	}
	c.re, err = compileRegex(pat, c.nc)
	if err != nil {
		return nil, fmt.Errorf("RewriteCond: %w", err)
	}
	c.m = newMatcher(c.re, pat, c.nc)
	return c, nil
}

// cutIntTest splits "-eq5" style and "-eq 5" (the value comes glued, as
// mod_rewrite reads the pattern as one word).
func cutIntTest(pat string) (condKind, string, bool) {
	if len(pat) < 3 || pat[0] != '-' {
		return 0, "", false
	}
	if k, ok := intTests[strings.ToLower(pat[:3])]; ok {
		return k, pat[3:], true
	}
	return 0, "", false
}

// flagList calls fn for each flag of "[A,B=c,...]". A value may be
// quoted ("E=\"Cache-Vary:a,b\"", as the LiteSpeed Cache plugin writes
// it, which LiteSpeed reads and Apache would not): commas inside quotes
// do not separate.
func flagList(s string, fn func(k, v string) error) error {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return fmt.Errorf("bad flag delimiters %q", s)
	}
	s = s[1 : len(s)-1]
	for s != "" {
		var item string
		inq := byte(0)
		i := 0
		for ; i < len(s); i++ {
			switch c := s[i]; {
			case inq != 0 && c == inq:
				inq = 0
			case inq == 0 && (c == '"' || c == '\''):
				inq = c
			case inq == 0 && c == ',':
				goto cut
			}
		}
	cut:
		item, s = s[:i], s[min(i+1, len(s)):]
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, _ := strings.Cut(item, "=")
		k = unquote(strings.TrimSpace(k))
		v = unquote(strings.TrimSpace(v))
		if q, ok := strings.CutPrefix(k, "\""); ok { // "E=..." quoted whole
			k = q
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// parseRule reads RewriteRule's arguments.
func parseRule(args []string) (*rule, error) {
	if len(args) < 2 || len(args) > 3 {
		return nil, fmt.Errorf("RewriteRule: bad argument line")
	}
	r := &rule{}
	nocase := false
	if len(args) == 3 {
		if err := flagList(args[2], func(k, v string) error { return r.flag(k, v, &nocase) }); err != nil {
			return nil, fmt.Errorf("RewriteRule: %w", err)
		}
	}
	pat := args[0]
	if strings.HasPrefix(pat, "!") {
		r.negate, pat = true, pat[1:]
	}
	var err error
	if r.re, err = compileRegex(pat, nocase); err != nil {
		return nil, fmt.Errorf("RewriteRule: %w", err)
	}
	r.m = newMatcher(r.re, pat, nocase)
	if args[1] == "-" {
		r.dash = true
	} else if r.subst, err = parseTemplate(args[1]); err != nil {
		return nil, fmt.Errorf("RewriteRule: %w", err)
	}
	return r, nil
}

// flag applies one RewriteRule flag.
func (r *rule) flag(k, v string, nocase *bool) error {
	f := &r.flags
	switch strings.ToLower(k) {
	case "l", "last":
		f.last = true
	case "end":
		f.end = true
	case "nc", "nocase":
		*nocase = true
	case "qsa", "qsappend":
		f.qsa = true
	case "qsd", "qsdiscard":
		f.qsd = true
	case "qsl", "qslast":
		f.qsl = true
	case "r", "redirect":
		code, err := redirectCode(v)
		if err != nil {
			return err
		}
		f.redirect = code
	case "f", "forbidden":
		f.forbidden = true
	case "g", "gone":
		f.gone = true
	case "e", "env":
		a, err := parseEnvFlag(v)
		if err != nil {
			return err
		}
		r.env = append(r.env, a)
	case "s", "skip":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("bad skip count %q", v)
		}
		f.skip = n
	case "c", "chain":
		f.chain = true
	case "pt", "passthrough", "ns", "nosubreq", "dpi", "discardpath", "unsafeallow3f", "bnp", "backrefnoplus", "unsafeprefixstat":
		// PT is what per-directory rules do anyway; the others change
		// nothing ramjet does.
	case "ne", "noescape":
		f.ne = true
	case "b":
		f.b = true
	case "n", "next":
		f.next = true
	case "p", "proxy":
		f.proxy = true
	case "co", "cookie":
		c, err := parseCookieFlag(v)
		if err != nil {
			return err
		}
		r.cookies = append(r.cookies, c)
	case "t", "type":
		f.mime = v
	case "h", "handler":
		// A handler names how Apache would run the file; ramjet runs
		// .php files and serves the rest.
	default:
		return fmt.Errorf("unknown flag %q", k)
	}
	return nil
}

func redirectCode(v string) (int, error) {
	switch strings.ToLower(v) {
	case "":
		return 302, nil
	case "permanent":
		return 301, nil
	case "temp":
		return 302, nil
	case "seeother":
		return 303, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 300 || n > 599 {
		return 0, fmt.Errorf("bad redirect status %q", v)
	}
	return n, nil
}

// parseEnvFlag reads E=NAME:VALUE or E=!NAME.
func parseEnvFlag(v string) (envAssign, error) {
	if name, ok := strings.CutPrefix(v, "!"); ok {
		return envAssign{name: name, unset: true}, nil
	}
	name, val, _ := strings.Cut(v, ":")
	if name == "" {
		return envAssign{}, fmt.Errorf("E= needs a variable name")
	}
	t, err := parseTemplate(val)
	return envAssign{name: name, value: t}, err
}

func parseCookieFlag(v string) (cookieFlag, error) {
	sep := ":"
	if strings.HasPrefix(v, ";") {
		sep, v = ";", v[1:]
	}
	f := strings.Split(v, sep)
	if len(f) < 3 {
		return cookieFlag{}, fmt.Errorf("CO= needs NAME%sVALUE%sDOMAIN", sep, sep)
	}
	var c cookieFlag
	var err error
	if c.name, err = parseTemplate(f[0]); err != nil {
		return c, err
	}
	if c.value, err = parseTemplate(f[1]); err != nil {
		return c, err
	}
	c.domain = f[2]
	if len(f) > 3 && f[3] != "" {
		if c.lifetime, err = strconv.Atoi(f[3]); err != nil {
			return c, fmt.Errorf("CO= lifetime %q is not a number", f[3])
		}
	}
	if len(f) > 4 {
		c.path = f[4]
	}
	if len(f) > 5 {
		c.secure = truthy(f[5])
	}
	if len(f) > 6 {
		c.httpOnly = truthy(f[6])
	}
	return c, nil
}

func truthy(s string) bool {
	switch strings.ToLower(s) {
	case "true", "1", "secure", "httponly":
		return true
	}
	return false
}

// finish decides, once the rule has its conditions, which matches must
// keep their captures: only those whose $N or %N something expands, so
// that the rest match without allocating.
func (r *rule) finish() {
	refs := func(t *template) {
		r.caps = r.caps || t.ruleRefs
		r.condCaps = r.condCaps || t.condRefs
		if r.unknown == "" {
			r.unknown = t.unknown
		}
	}
	refs(&r.subst)
	for i := range r.env {
		refs(&r.env[i].value)
	}
	for i := range r.cookies {
		refs(&r.cookies[i].name)
		refs(&r.cookies[i].value)
	}
	for _, c := range r.conds {
		refs(&c.test)
		refs(&c.operand)
	}
	if r.negate {
		r.caps = false
	}
}

// ownUnknown is the first unknown variable of the rule's own templates
// (its conditions' are reported at their lines).
func (r *rule) ownUnknown() string {
	ts := []*template{&r.subst}
	for i := range r.env {
		ts = append(ts, &r.env[i].value)
	}
	for i := range r.cookies {
		ts = append(ts, &r.cookies[i].name, &r.cookies[i].value)
	}
	return firstUnknown(ts...)
}

func firstUnknown(ts ...*template) string {
	for _, t := range ts {
		if t.unknown != "" {
			return t.unknown
		}
	}
	return ""
}

// usesTime reports whether the rule or its conditions read the clock.
func (r *rule) usesTime() bool {
	clock := func(t *template) bool {
		for _, p := range t.parts {
			if p.kind == partVar && p.n >= varTimeYear && p.n <= varTimeWday {
				return true
			}
		}
		return false
	}
	if clock(&r.subst) {
		return true
	}
	for _, c := range r.conds {
		if clock(&c.test) || clock(&c.operand) {
			return true
		}
	}
	for i := range r.env {
		if clock(&r.env[i].value) {
			return true
		}
	}
	return false
}
