package htaccess

import (
	"fmt"
	"strings"
)

// phpSwitch is what one scope says about running PHP for its files:
// set when a directive of the scope spoke, on when it lets PHP run.
// Sites switch PHP off in upload directories (Wordfence, iThemes,
// Sucuri, hand-written hardening) with mod_php's php_flag engine off or
// with mod_mime's handlers (SetHandler none, RemoveHandler .php,
// AddHandler cgi-script .php with ExecCGI off, AddType text/plain .php).
// Apache then serves such a script as a file (its source) or refuses
// it; ramjet never runs it and answers 403 (Outcome.PHPOff).
type phpSwitch struct {
	set, on bool
	cause   string // FILE:LINE: the directive, for the log
}

func (p *parser) setSwitch(sw *phpSwitch, ln line, on bool, directive string) {
	*sw = phpSwitch{set: true, on: on, cause: fmt.Sprintf("%s:%d: %s", p.f.Path, ln.n, directive)}
}

// phpEngine is php_flag/php_value engine: PHP's own switch. A value
// PHP would not read as on is off (fail closed).
func (p *parser) phpEngine(sc scope, ln line, args []string) {
	on := false
	switch strings.ToLower(args[1]) {
	case "on", "1", "true", "yes":
		on = true
	}
	p.setSwitch(&sc.sec.engine, ln, on, ln.text)
}

// isPHPHandler reports whether a handler (SetHandler, AddHandler) or a
// media type (AddType) is PHP's: mod_php's application/x-httpd-php,
// php-fpm's proxy:fcgi or proxy:unix:…php-fpm.sock, LiteSpeed's
// application/x-httpd-lsphp, cPanel's application/x-httpd-ea-php82.
func isPHPHandler(h string) bool {
	h = strings.ToLower(h)
	return strings.Contains(h, "php") || strings.HasPrefix(h, "proxy:")
}

// namesPHP reports whether an extension list (".php", "php", ".PHP")
// names the extension of the scripts ramjet runs.
func namesPHP(exts []string) bool {
	for _, e := range exts {
		if strings.EqualFold(strings.TrimPrefix(e, "."), "php") {
			return true
		}
	}
	return false
}

func dirSethandler(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) != 1 {
		return fmt.Errorf("SetHandler takes one argument")
	}
	p.setSwitch(&sc.sec.handler, ln, isPHPHandler(args[0]), ln.text)
	return nil
}

func dirAddhandler(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) < 2 {
		return fmt.Errorf("AddHandler: a handler and extensions")
	}
	if !namesPHP(args[1:]) {
		p.warn(ln.n, "addhandler", "AddHandler is not supported: ignored")
		return nil
	}
	p.setSwitch(&sc.sec.handler, ln, isPHPHandler(args[0]), ln.text)
	return nil
}

// dirRemovehandler is RemoveHandler and RemoveType: .php loses what
// made it a script.
func dirRemovehandler(p *parser, sc scope, ln line, args []string, raw string) error {
	if len(args) == 0 {
		return fmt.Errorf("%s needs extensions", firstWord(ln.text))
	}
	if !namesPHP(args) {
		name := firstWord(ln.text)
		p.warn(ln.n, strings.ToLower(name), name+" is not supported: ignored")
		return nil
	}
	p.setSwitch(&sc.sec.handler, ln, false, ln.text)
	return nil
}

// PHPOff reports whether the scopes of the request's file switch PHP
// off — php_flag engine off, or a handler or type for it that is not
// PHP's, the deepest scope's word winning — and the directive that did.
// Such a script is never run, nor served as its source.
func (o *Outcome) PHPOff() (cause string, off bool) {
	var engine, handler *phpSwitch
	for _, s := range o.secs {
		if s.engine.set {
			engine = &s.engine
		}
		if s.handler.set {
			handler = &s.handler
		}
	}
	switch {
	case engine != nil && !engine.on:
		return engine.cause, true
	case handler != nil && !handler.on:
		return handler.cause, true
	}
	return "", false
}
