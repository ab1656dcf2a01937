package conf

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Characters that may not appear in a cookie name (RFC 6265 token) or a
// query parameter name pattern.
const (
	badCookieChars = "()<>@,;:\\\"/[]?={}"
	badParamChars  = "&=#;"
)

// validate checks s under path. For a host, base is the Defaults it was
// overlaid on, and fields equal to base are skipped: they were already
// reported under "defaults".
func (s *Site) validate(p *problems, path string, base *Site) {
	if base == nil || s.DefaultTTL != base.DefaultTTL {
		p.nonNegative(path+".default_ttl", s.DefaultTTL)
	}
	if base == nil || s.Grace != base.Grace {
		p.nonNegative(path+".grace", s.Grace)
	}
	if s.HSTS != "" && (base == nil || s.HSTS != base.HSTS) {
		if msg := checkHSTS(s.HSTS); msg != "" {
			p.add(path+".hsts", msg)
		}
	}
	var b Site
	if base != nil {
		b = *base
	}
	p.patterns(path+".bypass_cookies", s.BypassCookies, b.BypassCookies, base != nil, badCookieChars)
	p.patterns(path+".vary_cookies", s.VaryCookies, b.VaryCookies, base != nil, badCookieChars)
	p.patterns(path+".anonymous_cookies", s.AnonymousCookies, b.AnonymousCookies, base != nil, badCookieChars)
	p.patterns(path+".drop_query_params", s.DropQueryParams, b.DropQueryParams, base != nil, badParamChars)
	p.paths(path+".default_ttl_with_cookies", s.DefaultTTLWithCookies, b.DefaultTTLWithCookies, base != nil)
	var bd *Docroot
	if base != nil {
		bd = &base.Docroot
	}
	if r := s.HtaccessRoot; r != "" && (base == nil || r != base.HtaccessRoot) {
		switch st, err := os.Stat(r); {
		case !filepath.IsAbs(r):
			p.add(path+".htaccess_root", fmt.Sprintf("%q must be an absolute path", r))
		case err != nil:
			p.add(path+".htaccess_root", err.Error())
		case !st.IsDir():
			p.add(path+".htaccess_root", fmt.Sprintf("%q is not a directory", r))
		case s.Docroot.Root != "":
			p.add(path+".htaccess_root", "is for proxy mode: a docroot site reads its root's .htaccess (docroot.htaccess)")
		}
	}
	s.Docroot.validate(p, path, bd)
	var bw *WAF
	if base != nil {
		bw = &base.WAF
	}
	s.WAF.validate(p, path, bw)
	var bc *Crawler
	if base != nil {
		bc = &base.Crawler
	}
	s.Crawler.validate(p, path, bc)
	var bwarm *Warm
	if base != nil {
		bwarm = &base.Warm
	}
	s.Warm.validate(p, path, bwarm)
}

// patterns checks name patterns: non-empty, '*' only at the end, none of
// bad, no spaces or control characters. If inherited and list equals
// base, it was checked already.
func (p *problems) patterns(path string, list, base []string, inherited bool, bad string) {
	if inherited && slices.Equal(list, base) {
		return
	}
	for i, pat := range list {
		ip := path + "[" + strconv.Itoa(i) + "]"
		switch star := strings.IndexByte(pat, '*'); {
		case pat == "":
			p.add(ip, "must not be empty")
		case star >= 0 && star != len(pat)-1:
			p.add(ip, fmt.Sprintf("%q: \"*\" may only end a pattern", pat))
		case strings.ContainsAny(pat, bad) || strings.ContainsFunc(pat, isSpaceOrCtl):
			p.add(ip, fmt.Sprintf("%q contains a character not allowed in a name", pat))
		}
	}
}

// paths checks path patterns as patterns, each starting with "/" and
// without a query or fragment.
func (p *problems) paths(path string, list, base []string, inherited bool) {
	p.patterns(path, list, base, inherited, "")
	if inherited && slices.Equal(list, base) {
		return
	}
	for i, pat := range list {
		ip := path + "[" + strconv.Itoa(i) + "]"
		switch {
		case pat != "" && pat[0] != '/':
			p.add(ip, fmt.Sprintf("%q must start with \"/\"", pat))
		case strings.ContainsAny(pat, "?#"):
			p.add(ip, fmt.Sprintf("%q: a path has no query or fragment", pat))
		}
	}
}

// validateHosts checks each host's names, unique across hosts, and its
// settings.
func (c *Config) validateHosts(p *problems) {
	seen := map[string]string{} // name -> path where first listed
	tokens := map[string]string{}
	if c.Admin.Token != "" {
		tokens[c.Admin.Token] = "admin.token"
	}
	for i := range c.Hosts {
		h := &c.Hosts[i]
		hp := "hosts[" + strconv.Itoa(i) + "]"
		p.hostNames(hp, h.Names, seen)
		h.Site.validate(p, hp, &c.Defaults)
		h.validateToken(p, hp, tokens)
		if c.Admin.Token == "" && (h.AdminToken != "" || h.AdminTokenFile != "") {
			// Without one, the admin API takes any local caller as the
			// operator: every tenant's PHP could purge every site.
			p.add(hp+".admin_token", "site tokens need admin.token set too (the operator's)")
		}
		if h.CacheSize != 0 {
			p.minSize(hp+".cache_size", h.CacheSize, MiB)
		}
	}
}

// validateToken checks a host's admin token: from one source, without
// white space or control characters, and not anyone else's (a token must
// name one scope).
func (h *Host) validateToken(p *problems, path string, tokens map[string]string) {
	if h.AdminToken != "" && h.AdminTokenFile != "" {
		p.add(path+".admin_token_file", "give admin_token or admin_token_file, not both")
		return
	}
	tp := path + ".admin_token"
	if h.AdminTokenFile != "" {
		tp += "_file"
	}
	tok, err := h.SiteToken()
	switch {
	case err != nil:
		p.add(tp, err.Error())
	case h.AdminTokenFile != "" && tok == "":
		p.add(tp, "the file holds no token")
	case strings.ContainsFunc(tok, isSpaceOrCtl):
		p.add(tp, "must not contain white space or control characters")
	case tok != "" && tokens[tok] != "":
		p.add(tp, "the same token as "+tokens[tok]+": a token names one site")
	case tok != "":
		tokens[tok] = tp
	}
}

// hostNames checks the names list at path: not empty, each a valid
// pattern, none already listed (seen maps a name to where it first was).
func (p *problems) hostNames(path string, names []string, seen map[string]string) {
	if len(names) == 0 {
		p.add(path+".names", "must list at least one host name")
	}
	for j, name := range names {
		np := path + ".names[" + strconv.Itoa(j) + "]"
		if msg := checkHostPattern(name); msg != "" {
			p.add(np, msg)
		} else if first, dup := seen[name]; dup {
			p.add(np, fmt.Sprintf("%q is already listed at %s", name, first))
		} else {
			seen[name] = np
		}
	}
}

// checkHostPattern returns what is wrong with a host name pattern, or "".
func checkHostPattern(name string) string {
	domain := strings.TrimPrefix(name, "*.")
	switch {
	case name == "":
		return "must not be empty"
	case strings.Contains(domain, "*"):
		return fmt.Sprintf("%q: \"*\" is only allowed as a leading \"*.\"", name)
	case name != strings.ToLower(name):
		return fmt.Sprintf("%q must be lower case", name)
	case !isHostName(domain):
		return fmt.Sprintf("%q is not a host name (no port, no trailing dot)", name)
	case name == "_default":
		// A site of that name would share the default site's series and
		// stats: its token would read every unnamed host's URLs.
		return fmt.Sprintf("%q is what /stats and /metrics call the hosts no entry names", name)
	}
	return ""
}

// isHostName reports whether s is dot-separated labels of letters,
// digits, '-' and '_', not starting or ending with '-'.
func isHostName(s string) bool {
	if len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
