package htaccess

import (
	"fmt"
	"regexp"
	"strings"
)

// File is one parsed .htaccess file, immutable once parsed.
type File struct {
	// Path is the file's name on disk, as errors and warnings cite it.
	Path string
	// Errs are the problems that make Apache answer 500 under the
	// file's directory (a malformed directive, a regex that does not
	// compile), each "FILE:LINE: message"; Err is the first.
	Errs []error
	// Warnings name the directives ramjet ignores, one per directive
	// name, each "FILE:LINE: message".
	Warnings []string
	// Unknown lists the rewrite rules that read a variable ramjet
	// cannot expand, each "FILE:LINE: message": they fail closed.
	Unknown []string

	top section
	// files are the <Files>/<FilesMatch> sections, in file order.
	files []*section
	// proxyOnly: parsed for proxy mode, where only the LiteSpeed cache
	// rules count.
	proxyOnly bool
	// failRead: the file exists but cannot be read; Apache answers 403.
	failRead bool
	// urlDir is the URL path of the file's directory ("/", "/a/").
	urlDir string
	// usesTime: a rule reads the clock, so no decision may be remembered.
	usesTime bool
}

// Err is the first error of f, nil when it parsed cleanly.
func (f *File) Err() error {
	if f == nil || len(f.Errs) == 0 {
		return nil
	}
	return f.Errs[0]
}

// Error is a problem at a line of a file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// section is what one scope of a file configures: the file's top level,
// or a <Files> section. Each module's part is nil when the scope has no
// directive of that module, as Apache creates a module's per-directory
// config only for a scope that uses it.
type section struct {
	match *fileMatch // <Files>/<FilesMatch>; nil at the top level

	rewrite *rewriteConf
	access  *accessConf // Order, Allow, Deny, Satisfy
	authz   *authzConf  // Require, <RequireAny> …
	auth    *authConf   // AuthType, AuthName, AuthUserFile

	redirects []*redirect
	headers   []*headerOp
	expires   *expiresConf
	errorDocs []errorDoc
	dirIndex  []string // nil: not set
	types     []typeMap
	forceType string
	charset   string // AddDefaultCharset; "off" turns it off
	fileETag  string
	setEnv    []envAssign
	setEnvIf  []*setEnvIf
	php       []phpSetting
	engine    phpSwitch  // php_flag engine
	handler   phpSwitch  // SetHandler, AddHandler, RemoveHandler, AddType, RemoveType for .php
	cache     *cacheConf // LiteSpeed's CacheLookup, CacheKeyModify

	// failClosed says why the scope answers 403: an access-control
	// directive ramjet cannot evaluate.
	failClosed string
	// requireSSL: SSLRequireSSL, 403 for a request not over TLS.
	requireSSL bool
}

// fileMatch selects the requests of a <Files> section by the final
// path segment.
type fileMatch struct {
	glob string         // <Files "name"> (wildcards ? * [..])
	re   *regexp.Regexp // <FilesMatch> or <Files ~ "re">
}

func (m *fileMatch) matches(name []byte) bool {
	if m.re != nil {
		return m.re.Match(name)
	}
	return matchGlob(m.glob, name)
}

// matchGlob matches * ? and [...] classes, as Apache's apr_fnmatch does
// for a <Files> name.
func matchGlob(g string, s []byte) bool {
	for len(g) > 0 {
		switch g[0] {
		case '*':
			for len(g) > 0 && g[0] == '*' {
				g = g[1:]
			}
			if g == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if matchGlob(g, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			g, s = g[1:], s[1:]
		case '[':
			end := strings.IndexByte(g[1:], ']')
			if end < 0 || len(s) == 0 {
				if len(s) == 0 || s[0] != '[' {
					return false
				}
				g, s = g[1:], s[1:]
				continue
			}
			class := g[1 : end+1]
			neg := strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^")
			if neg {
				class = class[1:]
			}
			if inClass(class, s[0]) == neg {
				return false
			}
			g, s = g[end+2:], s[1:]
		case '\\':
			if len(g) > 1 {
				g = g[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || g[0] != s[0] {
				return false
			}
			g, s = g[1:], s[1:]
		}
	}
	return len(s) == 0
}

func inClass(class string, c byte) bool {
	for i := 0; i < len(class); i++ {
		if i+2 < len(class) && class[i+1] == '-' {
			if class[i] <= c && c <= class[i+2] {
				return true
			}
			i += 2
			continue
		}
		if class[i] == c {
			return true
		}
	}
	return false
}
