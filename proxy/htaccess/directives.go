package htaccess

import (
	"fmt"
	"strings"
)

// directive parses one directive line into sc.
func (p *parser) directive(sc scope, ln line) {
	name, raw := splitDirective(ln.text)
	lname := strings.ToLower(name)
	if p.f.proxyOnly && !sc.litespeed && !proxyReads[lname] {
		return
	}
	var err error
	if h, ok := rewriteDirectives[lname]; ok {
		if sc.inFiles {
			p.warn(ln.n, lname, name+" inside <Files> is not supported: ignored")
			return
		}
		err = h(p, sc, ln, raw)
	} else if p.f.proxyOnly && !proxyReads[lname] {
		return // outside the cache rules: the origin's server reads it
	} else if h, ok := directives[lname]; ok {
		err = h(p, sc, ln, words(raw), raw)
	} else if accessName(lname) {
		// An access rule ramjet cannot read: whatever it protected is
		// refused rather than served.
		sc.sec.authzConf().failClosed = fmt.Sprintf("%s:%d: %s is not supported", p.f.Path, ln.n, name)
	} else {
		p.warn(ln.n, lname, fmt.Sprintf("%s is not supported: ignored", name))
	}
	if err != nil {
		p.errorf(ln.n, "%v", err)
	}
}

// proxyReads are what proxy mode reads outside <IfModule LiteSpeed>:
// the LiteSpeed cache directives, the browser-cache block the LiteSpeed
// Cache plugin writes (nginx would ignore it; Apache applies it itself,
// and then its Expires header is left alone), and the directory's
// rewrite state, which LiteSpeed takes from the whole file: the plugin
// writes RewriteEngine on in its <IfModule mod_rewrite.c> block, not in
// the LiteSpeed block whose rules need it. The other rewrite rules stay
// the origin's.
var proxyReads = map[string]bool{
	"cachelookup": true, "cachekeymodify": true,
	"cacheenable": true, "cachedisable": true, "cacheignorecachecontrol": true,
	"expiresactive": true, "expiresbytype": true, "expiresdefault": true,
	"rewriteengine": true, "rewritebase": true, "rewriteoptions": true,
}

// accessName: directives of the authentication and authorization
// modules, which fail closed when ramjet does not implement them.
func accessName(n string) bool {
	for _, pre := range []string{"require", "auth", "order", "deny", "allow", "satisfy", "anonymous", "sslrequire"} {
		if strings.HasPrefix(n, pre) {
			return true
		}
	}
	return false
}

// unknownVar notes a rule reading a variable ramjet cannot expand: it
// fails closed, and ramjet check --htaccess fails on it. Proxy mode
// reads only the LiteSpeed block's rules.
func (p *parser) unknownVar(sc scope, ln line, directive, name string) {
	if p.f.proxyOnly && !sc.litespeed {
		return
	}
	p.f.Unknown = append(p.f.Unknown, fmt.Sprintf("%s:%d: %s reads %s, a variable ramjet does not know", p.f.Path, ln.n, directive, name))
}

func cacheToggleHandler(name string, on bool) rewriteHandler {
	return func(p *parser, sc scope, ln line, raw string) error {
		t, err := parseCacheToggle(name, words(raw), on)
		if err != nil {
			return err
		}
		cc := sc.sec.cacheConf()
		cc.toggles = append(cc.toggles, t)
		return nil
	}
}

type rewriteHandler func(p *parser, sc scope, ln line, raw string) error

var rewriteDirectives = map[string]rewriteHandler{
	"rewriteengine": func(p *parser, sc scope, ln line, raw string) error {
		w := words(raw)
		if len(w) != 1 {
			return fmt.Errorf("RewriteEngine: on or off")
		}
		rc := sc.sec.rewriteConf()
		rc.engineSet = true
		switch strings.ToLower(w[0]) {
		case "on":
			rc.engine = true
		case "off":
			rc.engine = false
		default:
			return fmt.Errorf("RewriteEngine: on or off, not %q", w[0])
		}
		return nil
	},
	"rewritebase": func(p *parser, sc scope, ln line, raw string) error {
		w := words(raw)
		if len(w) != 1 || !strings.HasPrefix(w[0], "/") {
			return fmt.Errorf("RewriteBase: argument is not a valid URL")
		}
		sc.sec.rewriteConf().base = w[0]
		return nil
	},
	"rewriteoptions": func(p *parser, sc scope, ln line, raw string) error {
		rc := sc.sec.rewriteConf()
		for _, w := range words(raw) {
			switch strings.ToLower(w) {
			case "inherit":
				rc.inherit = inheritAfter
			case "inheritbefore":
				rc.inherit = inheritBefore
			case "inheritdown", "inheritdownbefore", "ignoreinherit", "allownoslash", "allowanyuri", "mergebase", "ignorecontextinfo", "legacyprefixdocroot":
				p.warn(ln.n, "rewriteoptions "+strings.ToLower(w), "RewriteOptions "+w+" is not supported: ignored")
			default:
				return fmt.Errorf("RewriteOptions: unknown option %q", w)
			}
		}
		return nil
	},
	"rewritecond": func(p *parser, sc scope, ln line, raw string) error {
		c, err := parseCond(ruleArgs(raw))
		if err != nil {
			return err
		}
		rc := sc.sec.rewriteConf()
		rc.pending = append(rc.pending, c)
		if u := firstUnknown(&c.test, &c.operand); u != "" {
			p.unknownVar(sc, ln, "RewriteCond", u)
		}
		return nil
	},
	"rewriterule": func(p *parser, sc scope, ln line, raw string) error {
		r, err := parseRule(ruleArgs(raw))
		rc := sc.sec.rewriteConf()
		conds := rc.pending
		rc.pending = nil
		if err != nil {
			return err
		}
		r.conds, r.litespeed = conds, sc.litespeed
		r.finish()
		p.f.usesTime = p.f.usesTime || r.usesTime()
		r.at = fmt.Sprintf("%s:%d", p.f.Path, ln.n)
		if r.unknown != "" {
			r.undecided = r.at + ": RewriteRule reads " + r.unknown + ", a variable ramjet does not know: not applied, the request bypasses the cache"
		}
		if u := r.ownUnknown(); u != "" {
			p.unknownVar(sc, ln, "RewriteRule", u)
		}
		rc.rules = append(rc.rules, r)
		return nil
	},
	"rewritemap": func(p *parser, sc scope, ln line, raw string) error {
		return fmt.Errorf("RewriteMap not allowed here")
	},
	"cachelookup": func(p *parser, sc scope, ln line, raw string) error {
		w := words(raw)
		cc := sc.sec.cacheConf()
		// "on", "off", or LiteSpeed's "public on" / "private on".
		v := ""
		if len(w) > 0 {
			v = strings.ToLower(w[len(w)-1])
		}
		switch v {
		case "on":
			cc.lookup, cc.lookupSet = true, true
		case "off":
			cc.lookup, cc.lookupSet = false, true
		default:
			return fmt.Errorf("CacheLookup: on or off")
		}
		return nil
	},
	"cacheenable":  cacheToggleHandler("CacheEnable", true),
	"cachedisable": cacheToggleHandler("CacheDisable", false),
	"cacheignorecachecontrol": func(p *parser, sc scope, ln line, raw string) error {
		w := words(raw)
		cc := sc.sec.cacheConf()
		if len(w) != 1 {
			return fmt.Errorf("CacheIgnoreCacheControl: on or off")
		}
		switch strings.ToLower(w[0]) {
		case "on":
			cc.ignoreCC, cc.ignoreCCSet = true, true
		case "off":
			cc.ignoreCC, cc.ignoreCCSet = false, true
		default:
			return fmt.Errorf("CacheIgnoreCacheControl: on or off, not %q", w[0])
		}
		return nil
	},
	"cachekeymodify": func(p *parser, sc scope, ln line, raw string) error {
		for _, w := range words(raw) {
			name, ok := strings.CutPrefix(strings.ToLower(w), "-qs:")
			if !ok || name == "" {
				p.warn(ln.n, "cachekeymodify "+w, "CacheKeyModify "+w+" is not supported: ignored")
				continue
			}
			cc := sc.sec.cacheConf()
			cc.dropQS = append(cc.dropQS, w[4:])
		}
		return nil
	},
}

type handler func(p *parser, sc scope, ln line, args []string, raw string) error

// directives are the handlers of the non-rewrite directives, by
// lower-case name.
var directives = map[string]handler{
	"order":              dirOrder,
	"allow":              dirAllow,
	"deny":               dirDeny,
	"satisfy":            dirSatisfy,
	"require":            dirRequire,
	"authtype":           dirAuthtype,
	"authname":           dirAuthname,
	"authuserfile":       dirAuthuserfile,
	"authbasicprovider":  dirAuthbasicprovider,
	"authmerging":        dirAuthmerging,
	"redirect":           redirectHandler(0, false),
	"redirectpermanent":  redirectHandler(301, false),
	"redirecttemp":       redirectHandler(302, false),
	"redirectmatch":      redirectHandler(0, true),
	"header":             dirHeader,
	"expiresactive":      dirExpiresactive,
	"expiresbytype":      dirExpiresbytype,
	"expiresdefault":     dirExpiresdefault,
	"errordocument":      dirErrordocument,
	"directoryindex":     dirDirectoryindex,
	"addtype":            dirAddtype,
	"forcetype":          dirForcetype,
	"adddefaultcharset":  dirAdddefaultcharset,
	"fileetag":           dirFileetag,
	"setenv":             dirSetenv,
	"unsetenv":           dirUnsetenv,
	"setenvif":           setEnvIfHandler("", false),
	"setenvifnocase":     setEnvIfHandler("", true),
	"browsermatch":       setEnvIfHandler("User-Agent", false),
	"browsermatchnocase": setEnvIfHandler("User-Agent", true),
	"options":            dirOptions,
	"sslrequiressl":      dirSSLRequireSSL,
	"php_value":          phpHandler(false),
	"php_flag":           phpHandler(false),
	"php_admin_value":    phpHandler(true),
	"php_admin_flag":     phpHandler(true),
	"sethandler":         dirSethandler,
	"addhandler":         dirAddhandler,
	"removehandler":      dirRemovehandler,
	"removetype":         dirRemovehandler,
}

func dirOrder(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 {
		return fmt.Errorf("Order takes one argument")
	}
	return sc.sec.accessConf().setOrder(args[0], sc.limit)
}

func dirAllow(p *parser, sc scope, ln line, args []string, raw string) error {
	return sc.sec.accessConf().addFrom(args, true, sc.limit, p.at(ln))
}

func dirDeny(p *parser, sc scope, ln line, args []string, raw string) error {
	return sc.sec.accessConf().addFrom(args, false, sc.limit, p.at(ln))
}

func dirSatisfy(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 {
		return fmt.Errorf("Satisfy takes one argument")
	}
	return sc.sec.accessConf().setSatisfy(args[0], sc.limit)
}

func dirRequire(p *parser, sc scope, ln line, args []string, raw string) error {
	leaf, unsupported, err := parseRequire(args, sc.limit)
	switch {
	case err != nil:
		return err
	case unsupported != "":
		sc.sec.authzConf().failClosed = fmt.Sprintf("%s:%d: %s", p.f.Path, ln.n, unsupported)
		return nil
	case leaf.negate:
		return fmt.Errorf("negative Require directive has no effect in <RequireAny> directive")
	}
	root := &sc.sec.authzConf().root
	root.children = append(root.children, leaf)
	return nil
}

func dirAuthtype(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 {
		return fmt.Errorf("AuthType takes one argument")
	}
	a := sc.sec.authConf()
	a.typeSet = true
	switch strings.ToLower(args[0]) {
	case "basic":
		a.authType = "Basic"
	case "none":
		a.authType = ""
	default:
		a.failClosed = fmt.Sprintf("%s:%d: AuthType %s is not supported", p.f.Path, ln.n, args[0])
	}
	return nil
}

func dirAuthname(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 {
		return fmt.Errorf("AuthName takes one argument")
	}
	a := sc.sec.authConf()
	a.authName, a.nameSet = args[0], true
	return nil
}

func dirAuthuserfile(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 {
		return fmt.Errorf("AuthUserFile takes one argument")
	}
	a := sc.sec.authConf()
	a.userFile, a.fileSet = args[0], true
	return nil
}

func dirAuthbasicprovider(p *parser, sc scope, ln line, args []string, raw string) error {
	for _, w := range args {
		if !strings.EqualFold(w, "file") {
			sc.sec.authConf().failClosed = fmt.Sprintf("%s:%d: AuthBasicProvider %s is not supported", p.f.Path, ln.n, w)
		}
	}
	return nil
}

func dirAuthmerging(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 || !strings.EqualFold(args[0], "off") {
		sc.sec.authzConf().failClosed = fmt.Sprintf("%s:%d: AuthMerging %s is not supported", p.f.Path, ln.n, raw)
	}
	return nil
}

func dirHeader(p *parser, sc scope, ln line, args []string, raw string) error {
	h, unsupported, err := parseHeader(args)
	if err != nil {
		return err
	}
	if unsupported != "" {
		p.warn(ln.n, "header "+unsupported, unsupported+": ignored")
		return nil
	}
	sc.sec.headers = append(sc.sec.headers, h)
	return nil
}

func dirExpiresactive(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 {
		return fmt.Errorf("ExpiresActive: on or off")
	}
	e := sc.sec.expiresConf()
	e.activeSet = true
	switch strings.ToLower(args[0]) {
	case "on":
		e.active = true
	case "off":
	default:
		return fmt.Errorf("ExpiresActive: on or off, not %q", args[0])
	}
	return nil
}

func dirExpiresbytype(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 2 {
		return fmt.Errorf("ExpiresByType: a media type and an expiry")
	}
	x, err := parseExpiry(args[1])
	if err != nil {
		return fmt.Errorf("ExpiresByType: %w", err)
	}
	e := sc.sec.expiresConf()
	if e.byType == nil {
		e.byType = map[string]expiry{}
	}
	e.byType[strings.ToLower(args[0])] = x
	return nil
}

func dirExpiresdefault(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 {
		return fmt.Errorf("ExpiresDefault: an expiry")
	}
	x, err := parseExpiry(args[0])
	if err != nil {
		return fmt.Errorf("ExpiresDefault: %w", err)
	}
	sc.sec.expiresConf().def = &x
	return nil
}

func dirErrordocument(p *parser, sc scope, ln line, args []string, raw string) error {
	d, err := parseErrorDoc(args, raw)
	if err != nil {
		return err
	}
	sc.sec.errorDocs = append(sc.sec.errorDocs, d)
	return nil
}

func dirDirectoryindex(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) == 0 {
		return fmt.Errorf("DirectoryIndex needs a file name")
	}
	if len(args) == 1 && strings.EqualFold(args[0], "disabled") {
		sc.sec.dirIndex = []string{}
		return nil
	}
	sc.sec.dirIndex = args
	return nil
}

func dirAddtype(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) < 2 {
		return fmt.Errorf("AddType: a media type and extensions")
	}
	for _, ext := range args[1:] {
		sc.sec.types = append(sc.sec.types, typeMap{ext: "." + strings.ToLower(strings.TrimPrefix(ext, ".")), mime: args[0]})
	}
	if namesPHP(args[1:]) {
		p.setSwitch(&sc.sec.handler, ln, isPHPHandler(args[0]), ln.text)
	}
	return nil
}

func dirForcetype(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 {
		return fmt.Errorf("ForceType takes one argument")
	}
	sc.sec.forceType = args[0]
	return nil
}

func dirAdddefaultcharset(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 {
		return fmt.Errorf("AddDefaultCharset takes one argument")
	}
	switch v := strings.ToLower(args[0]); v {
	case "on":
		sc.sec.charset = "iso-8859-1"
	default:
		sc.sec.charset = v
	}
	return nil
}

func dirFileetag(p *parser, sc scope, ln line, args []string, raw string) error {
	sc.sec.fileETag = strings.ToLower(strings.Join(args, " "))
	return nil
}

func dirSetenv(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("SetEnv: a name and a value")
	}
	v := ""
	if len(args) == 2 {
		v = args[1]
	}
	sc.sec.setEnv = append(sc.sec.setEnv, envAssign{name: args[0], value: template{parts: []part{{kind: partLit, lit: v}}}})
	return nil
}

func dirUnsetenv(p *parser, sc scope, ln line, args []string, raw string) error {
	for _, n := range args {
		sc.sec.setEnv = append(sc.sec.setEnv, envAssign{name: n, unset: true})
	}
	return nil
}

func dirOptions(p *parser, sc scope, ln line, args []string, raw string) error {
	for _, o := range args {
		switch strings.ToLower(strings.TrimLeft(o, "+-")) {
		case "indexes", "followsymlinks", "symlinksifownermatch", "execcgi", "includes", "includesnoexec", "none", "all":
			// Directory listings stay off and symlinks follow
			// the site's own setting, whatever these say.
		case "multiviews":
			if !strings.HasPrefix(o, "-") { // -MultiViews asks for what ramjet does anyway
				p.warn(ln.n, "options multiviews", "Options MultiViews is not supported: ignored")
			}
		default:
			return fmt.Errorf("Illegal option %s", o)
		}
	}
	return nil
}

func (s *section) expiresConf() *expiresConf {
	if s.expires == nil {
		s.expires = &expiresConf{}
	}
	return s.expires
}

func redirectHandler(status int, match bool) handler {
	return func(p *parser, sc scope, ln line, args []string, raw string) error {
		r, err := parseRedirect(args, status, match)
		if err != nil {
			return err
		}
		sc.sec.redirects = append(sc.sec.redirects, r)
		return nil
	}
}

func setEnvIfHandler(attr string, nocase bool) handler {
	return func(p *parser, sc scope, ln line, args []string, raw string) error {
		if attr != "" {
			args = append([]string{attr}, args...)
		}
		s, err := parseSetEnvIf(args, nocase)
		if err != nil {
			return err
		}
		sc.sec.setEnvIf = append(sc.sec.setEnvIf, s)
		return nil
	}
}

func phpHandler(admin bool) handler {
	return func(p *parser, sc scope, ln line, args []string, raw string) error {
		if len(args) != 2 {
			return fmt.Errorf("php_value and php_flag take a name and a value")
		}
		if strings.EqualFold(args[0], "engine") {
			p.phpEngine(sc, ln, args) // honoured: a directory PHP must not run in
			return nil
		}
		sc.sec.php = append(sc.sec.php, phpSetting{admin: admin, name: args[0], value: args[1]})
		p.warn(ln.n, "php_value", "php_value/php_flag: php-cgi takes no per-request settings; put them in .user.ini: ignored")
		return nil
	}
}

// at names a line as FILE:LINE.
func (p *parser) at(ln line) string { return fmt.Sprintf("%s:%d", p.f.Path, ln.n) }

// dirSSLRequireSSL refuses what does not come over TLS (a TLS terminator
// in front counts: behind_tls).
func dirSSLRequireSSL(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 0 {
		return fmt.Errorf("SSLRequireSSL takes no arguments")
	}
	sc.sec.requireSSL = true
	return nil
}
