package htaccess

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads src, the contents of the file at path. With proxyOnly only
// the LiteSpeed cache rules count (the rules inside <IfModule LiteSpeed>,
// CacheLookup, CacheKeyModify): the origin's own server does the rest.
func Parse(path string, src []byte, proxyOnly bool) *File {
	f := &File{Path: path, proxyOnly: proxyOnly}
	ls, lerr := lines(string(src))
	if lerr != nil {
		f.Errs = append(f.Errs, &Error{File: path, Line: lerr.n, Msg: lerr.msg})
		return f
	}
	p := &parser{f: f, lines: ls, warned: map[string]bool{}}
	p.block(scope{sec: &f.top, limit: allMethods}, "", 0)
	f.top.finish(p, 0)
	for _, s := range f.files {
		s.finish(p, 0)
	}
	return f
}

type parser struct {
	f      *File
	lines  []line
	i      int
	warned map[string]bool
}

// scope is where a directive lands: its section, the methods a <Limit>
// restricts it to, and whether it is inside <IfModule LiteSpeed>.
type scope struct {
	sec       *section
	limit     methodSet
	litespeed bool
	inFiles   bool
}

func (p *parser) errorf(n int, format string, args ...any) {
	p.f.Errs = append(p.f.Errs, &Error{File: p.f.Path, Line: n, Msg: fmt.Sprintf(format, args...)})
}

// warn notes an ignored directive once per file.
func (p *parser) warn(n int, key, msg string) {
	if p.f.proxyOnly || p.warned[key] {
		return
	}
	p.warned[key] = true
	p.f.Warnings = append(p.f.Warnings, fmt.Sprintf("%s:%d: %s", p.f.Path, n, msg))
}

// block parses lines into sc until the closing tag of end ("" for the
// end of the file), opened at line open.
func (p *parser) block(sc scope, end string, open int) {
	for p.i < len(p.lines) {
		ln := p.lines[p.i]
		p.i++
		t := ln.text
		if strings.HasPrefix(t, "</") {
			name := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(t[2:]), ">"))
			if end != "" && name == end {
				return
			}
			p.errorf(ln.n, "</%s> without matching <%s> section", name, name)
			continue
		}
		if strings.HasPrefix(t, "<") {
			p.section(sc, ln)
			continue
		}
		p.directive(sc, ln)
	}
	if end != "" {
		p.errorf(open, "<%s> was not closed", end)
	}
}

// skip passes over a section whose condition is false, up to its
// closing tag, nested sections included.
func (p *parser) skip(end string, open int) {
	depth := 0
	for p.i < len(p.lines) {
		t := p.lines[p.i].text
		p.i++
		switch {
		case strings.HasPrefix(t, "</"):
			if depth == 0 {
				if strings.EqualFold(strings.TrimSuffix(strings.TrimSpace(t[2:]), ">"), end) {
					return
				}
				p.errorf(p.lines[p.i-1].n, "expected </%s> but saw %s", end, t)
				return
			}
			depth--
		case strings.HasPrefix(t, "<"):
			depth++
		}
	}
	p.errorf(open, "<%s> was not closed", end)
}

// section parses "<Name args>" and its contents.
func (p *parser) section(sc scope, ln line) {
	t := strings.TrimSpace(ln.text[1:])
	if !strings.HasSuffix(t, ">") {
		p.errorf(ln.n, "<%s directive missing closing '>'", firstWord(t))
		return
	}
	t = strings.TrimSpace(t[:len(t)-1])
	name, rest := firstWord(t), ""
	if len(t) > len(name) {
		rest = strings.TrimSpace(t[len(name):])
	}
	lname := strings.ToLower(name)
	args := words(rest)
	switch lname {
	case "ifmodule":
		if len(args) != 1 {
			p.errorf(ln.n, "<IfModule> needs one module name")
			p.skip(lname, ln.n)
			return
		}
		mod, neg := strings.CutPrefix(args[0], "!")
		ls := isLiteSpeed(mod)
		if knownModule(mod) == neg {
			p.skip(lname, ln.n)
			return
		}
		inner := sc
		inner.litespeed = sc.litespeed || ls && !neg
		p.block(inner, lname, ln.n)
	case "ifdefine":
		if len(args) != 1 || !strings.HasPrefix(args[0], "!") {
			p.skip(lname, ln.n) // nothing is defined
			return
		}
		p.block(sc, lname, ln.n)
	case "ifversion":
		if !versionMatches(args) {
			p.skip(lname, ln.n)
			return
		}
		p.block(sc, lname, ln.n)
	case "files", "filesmatch":
		p.filesSection(sc, ln, lname, args)
	case "limit", "limitexcept":
		p.limitSection(sc, ln, lname, args)
	case "requireany", "requireall", "requirenone":
		p.requireSection(sc, ln, lname, args)
	case "if", "elseif", "else":
		p.ifSection(sc, ln, lname)
	case "directory", "directorymatch", "location", "locationmatch", "virtualhost", "proxy", "proxymatch":
		p.errorf(ln.n, "<%s not allowed here", name)
		p.skip(lname, ln.n)
	default:
		if !p.f.proxyOnly || sc.litespeed {
			p.warn(ln.n, "<"+lname, fmt.Sprintf("<%s> is not supported: its contents are ignored", name))
		}
		p.skip(lname, ln.n)
	}
}

func firstWord(s string) string {
	i := 0
	for i < len(s) && !isSpace(s[i]) && s[i] != '>' {
		i++
	}
	return s[:i]
}

// knownModule: the modules whose directives ramjet reads (as Apache names
// them in <IfModule>, by source file or module identifier).
func knownModule(m string) bool {
	m = strings.ToLower(m)
	m = strings.TrimSuffix(m, ".c")
	m = strings.TrimSuffix(m, "_module")
	m = strings.TrimPrefix(m, "mod_")
	switch m {
	case "rewrite", "headers", "expires", "mime", "alias", "authz_core", "access_compat", "litespeed",
		"authn_core", "authn_file", "auth_basic", "authz_user", "authz_host", "env", "setenvif",
		"dir", "core", "version", "http2":
		return true
	}
	return phpModule(m)
}

// phpModule: mod_php (php_module, mod_php7.c, php5_module …) and
// LiteSpeed's lsapi_module count as present, so that a php_flag engine
// off inside their <IfModule> is read: the site meant PHP off there.
func phpModule(m string) bool {
	if m == "lsapi" {
		return true
	}
	v, ok := strings.CutPrefix(m, "php")
	return ok && strings.Trim(v, "0123456789") == ""
}

func isLiteSpeed(m string) bool { return strings.EqualFold(m, "litespeed") }

// versionMatches evaluates <IfVersion [op] 2.4[.x]> against Apache 2.4.62,
// the release whose behaviour ramjet follows.
func versionMatches(args []string) bool {
	op, v := "=", ""
	switch len(args) {
	case 1:
		v = args[0]
	case 2:
		op, v = args[0], args[1]
	default:
		return false
	}
	neg := strings.HasPrefix(op, "!")
	op = strings.TrimPrefix(op, "!")
	have := [3]int{2, 4, 62}
	var want [3]int
	parts := strings.Split(v, ".")
	for i := 0; i < len(parts) && i < 3; i++ {
		want[i], _ = strconv.Atoi(parts[i])
	}
	cmp := 0
	for i := 0; i < len(parts) && i < 3; i++ {
		if have[i] != want[i] {
			cmp = 1
			if have[i] < want[i] {
				cmp = -1
			}
			break
		}
	}
	var ok bool
	switch op {
	case "=", "==":
		ok = cmp == 0
	case ">":
		ok = cmp > 0
	case ">=":
		ok = cmp >= 0
	case "<":
		ok = cmp < 0
	case "<=":
		ok = cmp <= 0
	}
	return ok != neg
}

func (p *parser) filesSection(sc scope, ln line, lname string, args []string) {
	if sc.inFiles {
		p.errorf(ln.n, "<Files> inside <Files> is not allowed")
		p.skip(lname, ln.n)
		return
	}
	m := &fileMatch{}
	switch {
	case lname == "files" && len(args) == 1:
		m.glob = args[0]
	case lname == "files" && len(args) == 2 && args[0] == "~", lname == "filesmatch" && len(args) == 1:
		re, err := compileRegex(args[len(args)-1], false)
		if err != nil {
			p.errorf(ln.n, "<%s>: %v", lname, err)
			p.skip(lname, ln.n)
			return
		}
		m.re = re
	default:
		p.errorf(ln.n, "<%s> needs one name or pattern", lname)
		p.skip(lname, ln.n)
		return
	}
	s := &section{match: m}
	p.block(scope{sec: s, limit: sc.limit, litespeed: sc.litespeed, inFiles: true}, lname, ln.n)
	if p.f.proxyOnly {
		return
	}
	p.f.files = append(p.f.files, s)
}

func (p *parser) limitSection(sc scope, ln line, lname string, args []string) {
	if len(args) == 0 {
		p.errorf(ln.n, "<%s> needs methods", lname)
		p.skip(lname, ln.n)
		return
	}
	var set methodSet
	for _, m := range args {
		set |= methodBit([]byte(strings.ToUpper(m)))
	}
	if lname == "limitexcept" {
		set = allMethods &^ set
	}
	inner := sc
	inner.limit = sc.limit & set
	p.block(inner, lname, ln.n)
}

// ifSection: <If> expressions are not evaluated. Their contents are
// ignored, but access control inside one fails closed: it may have
// been what protected the directory.
func (p *parser) ifSection(sc scope, ln line, lname string) {
	tmp := &section{}
	saveErrs, saveWarn := len(p.f.Errs), len(p.f.Warnings)
	p.block(scope{sec: tmp, limit: sc.limit, litespeed: sc.litespeed, inFiles: sc.inFiles}, lname, ln.n)
	p.f.Errs, p.f.Warnings = p.f.Errs[:saveErrs], p.f.Warnings[:saveWarn]
	if p.f.proxyOnly {
		return
	}
	if tmp.access != nil || tmp.authz != nil || tmp.auth != nil || tmp.failClosed != "" {
		sc.sec.authzConf().failClosed = fmt.Sprintf("%s:%d: access control inside <%s> is not supported", p.f.Path, ln.n, lname)
		return
	}
	p.warn(ln.n, "<"+lname, fmt.Sprintf("<%s> expressions are not supported: its contents are ignored", lname))
}

func (p *parser) requireSection(sc scope, ln line, lname string, args []string) {
	if len(args) != 0 {
		p.errorf(ln.n, "<%s> takes no arguments", lname)
	}
	parent := &sc.sec.authzConf().root
	node := &authzNode{kind: nodeAny, limited: sc.limit}
	switch lname {
	case "requireall":
		node.kind = nodeAll
	case "requirenone":
		node.kind = nodeNone
	}
	p.requireBlock(sc, node, lname, ln.n)
	parent.children = append(parent.children, node)
}

// requireBlock reads Require lines and nested containers into node.
func (p *parser) requireBlock(sc scope, node *authzNode, end string, open int) {
	for p.i < len(p.lines) {
		ln := p.lines[p.i]
		p.i++
		t := ln.text
		switch {
		case strings.HasPrefix(t, "</"):
			name := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(t[2:]), ">"))
			if name != end {
				p.errorf(ln.n, "expected </%s> but saw </%s>", end, name)
			}
			p.checkNegation(node, ln.n, end)
			return
		case strings.HasPrefix(t, "<"):
			inner := strings.ToLower(firstWord(strings.TrimSuffix(t[1:], ">")))
			child := &authzNode{kind: nodeAny, limited: sc.limit}
			switch inner {
			case "requireany":
			case "requireall":
				child.kind = nodeAll
			case "requirenone":
				child.kind = nodeNone
			default:
				p.errorf(ln.n, "<%s> is not allowed in <%s>", inner, end)
				p.skip(inner, ln.n)
				continue
			}
			p.requireBlock(sc, child, inner, ln.n)
			node.children = append(node.children, child)
		default:
			name, rest := splitDirective(t)
			if !strings.EqualFold(name, "require") {
				p.errorf(ln.n, "%s is not allowed in <%s>", name, end)
				continue
			}
			leaf, unsupported, err := parseRequire(words(rest), sc.limit)
			switch {
			case err != nil:
				p.errorf(ln.n, "%v", err)
			case unsupported != "":
				sc.sec.authzConf().failClosed = fmt.Sprintf("%s:%d: %s", p.f.Path, ln.n, unsupported)
			default:
				node.children = append(node.children, leaf)
			}
		}
	}
	p.errorf(open, "<%s> was not closed", end)
}

// checkNegation: as Apache, a negated Require cannot stand in an "any"
// container, where it could never grant.
func (p *parser) checkNegation(node *authzNode, n int, end string) {
	if node.kind != nodeAny {
		return
	}
	for _, ch := range node.children {
		if ch.kind == nodeLeaf && ch.negate {
			p.errorf(n, "negative Require directive has no effect in <%s> directive", end)
			return
		}
	}
}

func splitDirective(t string) (name, rest string) {
	i := 0
	for i < len(t) && !isSpace(t[i]) {
		i++
	}
	return t[:i], strings.TrimLeft(t[i:], " \t")
}

func (s *section) authzConf() *authzConf {
	if s.authz == nil {
		s.authz = &authzConf{root: authzNode{kind: nodeAny, limited: allMethods}}
	}
	return s.authz
}

func (s *section) accessConf() *accessConf {
	if s.access == nil {
		s.access = &accessConf{}
	}
	return s.access
}

func (s *section) authConf() *authConf {
	if s.auth == nil {
		s.auth = &authConf{}
	}
	return s.auth
}

func (s *section) rewriteConf() *rewriteConf {
	if s.rewrite == nil {
		s.rewrite = &rewriteConf{}
	}
	return s.rewrite
}

func (s *section) cacheConf() *cacheConf {
	if s.cache == nil {
		s.cache = &cacheConf{}
	}
	return s.cache
}

// finish drops what the file left pending.
func (s *section) finish(p *parser, _ int) {
	if s.rewrite != nil {
		s.rewrite.pending = nil // conditions without a rule apply to nothing
	}
}
