package htaccess

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// redirect is mod_alias's Redirect or RedirectMatch.
type redirect struct {
	status int
	prefix string         // Redirect: the URL path it matches
	re     *regexp.Regexp // RedirectMatch
	target template       // RedirectMatch: $N expanded; "" for gone
	url    string         // Redirect: the target prefix
}

// parseRedirect reads Redirect / RedirectPermanent / RedirectTemp
// (match false) or RedirectMatch (match true) arguments.
func parseRedirect(args []string, status int, match bool) (*redirect, error) {
	r := &redirect{status: status}
	if status == 0 && len(args) > 0 {
		if code, ok := redirectStatus(args[0]); ok {
			r.status, args = code, args[1:]
		}
	}
	if r.status == 0 {
		r.status = 302
	}
	needURL := r.status >= 300 && r.status < 400
	switch {
	case len(args) == 1 && !needURL:
	case len(args) == 2 && needURL:
	case len(args) == 2 && !needURL:
		return nil, fmt.Errorf("redirect to non-redirect status %d takes no URL", r.status)
	default:
		return nil, fmt.Errorf("Redirect: bad arguments")
	}
	if match {
		re, err := compileRegex(args[0], false)
		if err != nil {
			return nil, fmt.Errorf("RedirectMatch: %w", err)
		}
		r.re = re
	} else {
		if !strings.HasPrefix(args[0], "/") {
			return nil, fmt.Errorf("Redirect: the URL path %q must start with /", args[0])
		}
		r.prefix = args[0]
	}
	if needURL {
		u := args[1]
		if !strings.Contains(u, "://") && !strings.HasPrefix(u, "/") {
			return nil, fmt.Errorf("Redirect to non-URL %q", u)
		}
		if match {
			t, err := parseRegexTarget(u)
			if err != nil {
				return nil, err
			}
			r.target = t
		} else {
			r.url = u
		}
	}
	return r, nil
}

// parseRegexTarget reads a RedirectMatch or SetEnvIf target: $N only
// ("%" is literal there).
func parseRegexTarget(s string) (template, error) { return scanTemplate(s, false) }

func redirectStatus(w string) (int, bool) {
	switch strings.ToLower(w) {
	case "permanent":
		return 301, true
	case "temp":
		return 302, true
	case "seeother":
		return 303, true
	case "gone":
		return 410, true
	}
	if n, err := strconv.Atoi(w); err == nil && n >= 300 && n < 600 {
		return n, true
	}
	return 0, false
}

// headerOp is one Header directive.
type headerOp struct {
	always bool
	action string // set, append, add, merge, unset, setifempty
	name   string
	value  string
	env    string // env=NAME, "!NAME": not set; "" always
}

func parseHeader(args []string) (*headerOp, string, error) {
	h := &headerOp{}
	if len(args) > 0 {
		switch strings.ToLower(args[0]) {
		case "always":
			h.always, args = true, args[1:]
		case "onsuccess":
			args = args[1:]
		}
	}
	if len(args) < 2 {
		return nil, "", fmt.Errorf("Header: needs an action and a header name")
	}
	h.action, h.name, args = strings.ToLower(args[0]), args[1], args[2:]
	switch h.action {
	case "set", "append", "add", "merge", "setifempty":
		if len(args) == 0 {
			return nil, "", fmt.Errorf("Header %s: needs a value", h.action)
		}
		h.value, args = args[0], args[1:]
	case "unset":
	case "echo", "edit", "edit*", "note":
		return nil, "Header " + h.action + " is not supported", nil
	default:
		return nil, "", fmt.Errorf("Header: unknown action %q", h.action)
	}
	for _, a := range args {
		switch la := strings.ToLower(a); {
		case strings.HasPrefix(la, "env="):
			h.env = a[4:]
		case la == "early":
		case strings.HasPrefix(la, "expr="):
			return nil, "Header expr= conditions are not supported", nil
		default:
			return nil, "", fmt.Errorf("Header: unexpected %q", a)
		}
	}
	return h, "", nil
}

// expiresConf is mod_expires': merged field by field, types overlaid.
type expiresConf struct {
	active, activeSet bool
	byType            map[string]expiry // lower-case media type, or "type/*"
	def               *expiry
}

// expiry is "A<seconds>" or "M<seconds>": from the access or the file's
// modification time.
type expiry struct {
	modified bool
	secs     int64
}

// parseExpiry reads "A3600", "M86400" or "access plus 1 month 2 days".
func parseExpiry(s string) (expiry, error) {
	s = strings.TrimSpace(s)
	if len(s) > 1 && (s[0] == 'A' || s[0] == 'M') {
		n, err := strconv.ParseInt(s[1:], 10, 64)
		if err != nil || n < 0 {
			return expiry{}, fmt.Errorf("bad expiry %q", s)
		}
		return expiry{modified: s[0] == 'M', secs: n}, nil
	}
	f := strings.Fields(strings.ToLower(s))
	if len(f) < 3 {
		return expiry{}, fmt.Errorf("bad expiry %q", s)
	}
	var e expiry
	switch f[0] {
	case "access", "now":
	case "modification":
		e.modified = true
	default:
		return expiry{}, fmt.Errorf("bad expiry base %q", f[0])
	}
	f = f[1:]
	if f[0] == "plus" {
		f = f[1:]
	}
	if len(f) == 0 || len(f)%2 != 0 {
		return expiry{}, fmt.Errorf("bad expiry %q", s)
	}
	for i := 0; i < len(f); i += 2 {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || n < 0 {
			return expiry{}, fmt.Errorf("bad expiry %q", s)
		}
		unit, ok := expiryUnits[strings.TrimSuffix(f[i+1], "s")]
		if !ok {
			return expiry{}, fmt.Errorf("bad expiry unit %q", f[i+1])
		}
		e.secs += n * unit
	}
	return e, nil
}

var expiryUnits = map[string]int64{
	"year": 365 * 86400, "month": 30 * 86400, "week": 7 * 86400, "day": 86400,
	"hour": 3600, "minute": 60, "second": 1,
}

// at is when a response expires, from now or the file's mtime.
func (e expiry) at(now, mod time.Time) time.Time {
	if e.modified && !mod.IsZero() {
		return mod.Add(time.Duration(e.secs) * time.Second)
	}
	return now.Add(time.Duration(e.secs) * time.Second)
}

// errorDoc is ErrorDocument CODE what.
type errorDoc struct {
	status int
	kind   uint8 // docLocal, docURL, docText, docDefault
	value  string
}

const (
	docLocal = iota
	docURL
	docText
	docDefault
)

func parseErrorDoc(args []string, raw string) (errorDoc, error) {
	if len(args) < 2 {
		return errorDoc{}, fmt.Errorf("ErrorDocument: needs a status and a document")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 400 || n > 599 {
		return errorDoc{}, fmt.Errorf("ErrorDocument: unsupported HTTP response code %s", args[0])
	}
	d := errorDoc{status: n}
	rest := strings.TrimSpace(raw[len(args[0]):])
	switch {
	case strings.EqualFold(args[1], "default") && len(args) == 2:
		d.kind = docDefault
	case strings.HasPrefix(rest, "\""):
		d.kind, d.value = docText, strings.TrimSuffix(rest[1:], "\"")
	case len(args) == 2 && strings.HasPrefix(args[1], "/"):
		d.kind, d.value = docLocal, args[1]
	case len(args) == 2 && strings.Contains(args[1], "://"):
		d.kind, d.value = docURL, args[1]
	default:
		d.kind, d.value = docText, rest
	}
	return d, nil
}

// typeMap is AddType TYPE .ext.
type typeMap struct{ ext, mime string }

// setEnvIf is SetEnvIf / SetEnvIfNoCase / BrowserMatch.
type setEnvIf struct {
	attr string
	re   *regexp.Regexp
	sets []envAssign
}

func parseSetEnvIf(args []string, nocase bool) (*setEnvIf, error) {
	if len(args) < 3 {
		return nil, fmt.Errorf("SetEnvIf: needs an attribute, a regex and a variable")
	}
	re, err := compileRegex(args[1], nocase)
	if err != nil {
		return nil, fmt.Errorf("SetEnvIf: %w", err)
	}
	s := &setEnvIf{attr: args[0], re: re}
	for _, w := range args[2:] {
		if name, ok := strings.CutPrefix(w, "!"); ok {
			s.sets = append(s.sets, envAssign{name: name, unset: true})
			continue
		}
		name, val, ok := strings.Cut(w, "=")
		if !ok {
			val = "1"
		}
		t, err := parseRegexTarget(val)
		if err != nil {
			return nil, err
		}
		s.sets = append(s.sets, envAssign{name: name, value: t})
	}
	return s, nil
}

// phpSetting is php_value / php_flag / php_admin_*.
type phpSetting struct {
	admin       bool
	name, value string
}

// cacheConf is LiteSpeed's cache directives of a scope.
type cacheConf struct {
	lookup, lookupSet bool
	dropQS            []string // CacheKeyModify -qs:NAME
	// toggles are CacheEnable and CacheDisable, in file order.
	toggles               []cacheToggle
	ignoreCC, ignoreCCSet bool // CacheIgnoreCacheControl
}

// cacheToggle is one CacheEnable or CacheDisable: the public or the
// private cache on or off for the URLs at or below prefix.
type cacheToggle struct {
	on, private bool
	prefix      string
	ttl         int64 // CacheEnable max-age=N; 0: defaultCacheTTL
}

// defaultCacheTTL is LiteSpeed's default "Cache Expire Time" (its
// cache module's expireInSeconds): how long CacheEnable keeps a page
// whose application says nothing.
const defaultCacheTTL = 3600

// parseCacheToggle reads CacheEnable / CacheDisable arguments as
// LiteSpeed does: [public|private] [url-string], plus max-age=N for
// CacheEnable; Apache's storage types (disk, mem, socache) are the
// public cache, CacheDisable on (Apache's, in a directory) all of it.
func parseCacheToggle(name string, args []string, on bool) (cacheToggle, error) {
	t := cacheToggle{on: on, prefix: "/"}
	for _, a := range args {
		la := strings.ToLower(a)
		switch {
		case la == "public", la == "disk", la == "mem", la == "socache":
			t.private = false
		case la == "private":
			t.private = true
		case la == "on" && !on:
		case strings.HasPrefix(la, "max-age=") && on:
			n, err := strconv.ParseInt(a[len("max-age="):], 10, 64)
			if err != nil || n <= 0 {
				return t, fmt.Errorf("%s: bad %q", name, a)
			}
			t.ttl = n
		case strings.HasPrefix(a, "/"):
			t.prefix = a
		default:
			return t, fmt.Errorf("%s: unexpected %q (want public or private, a URL path)", name, a)
		}
	}
	return t, nil
}

// covers reports whether the toggle applies to the URL path.
func (t *cacheToggle) covers(path []byte) bool {
	p := t.prefix
	if len(path) < len(p) || string(path[:len(p)]) != p {
		return false
	}
	// "/admin" covers /admin and /admin/x, not /administrator.
	return p[len(p)-1] == '/' || len(path) == len(p) || path[len(p)] == '/'
}
