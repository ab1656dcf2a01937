package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/proxy"
	"github.com/ramjet-proxy/ramjet/proxy/waf"
)

// wafSite is one site's WAF settings and where the file sets them.
type wafSite struct {
	path string // "defaults" or "hosts[i]"
	w    conf.WAF
	dst  *proxy.WAF
}

// attachWAF compiles (or takes from lib) the rule set of every site whose
// WAF is on and fills in the sites' WAF policies of pc. A rule file that
// cannot be read or does not compile is a problem of the key that names
// it, reported once per distinct rule set; it returns the sets in use.
func attachWAF(pc *proxy.Config, c *conf.Config, lib *waf.Library) ([]*waf.Set, error) {
	sites := []wafSite{{path: "defaults", w: c.Defaults.WAF, dst: &pc.Default.WAF}}
	for i := range c.Hosts {
		sites = append(sites, wafSite{path: fmt.Sprintf("hosts[%d]", i), w: c.Hosts[i].WAF, dst: &pc.Sites[i].WAF})
	}
	var inUse []*waf.Set
	var errs []error
	failed := map[string]bool{} // rule settings already reported
	for _, s := range sites {
		if !s.w.On() {
			continue
		}
		rules := wafRules(s.w)
		id := fmt.Sprint(rules)
		if failed[id] {
			continue
		}
		set, err := lib.Get(rules)
		if err != nil {
			failed[id] = true
			errs = append(errs, &siteError{path: s.path + ".waf." + blamed(s.w), err: err})
			continue
		}
		inUse = append(inUse, set)
		p, err := wafPolicy(s.w, set)
		if err != nil {
			errs = append(errs, &siteError{path: s.path + ".waf.page", err: err})
			continue
		}
		*s.dst = p
	}
	return inUse, errors.Join(errs...)
}

// blamed is the key a compile error is reported at: the rule files when
// there are any (the CRS and the built-in exclusions compile).
func blamed(w conf.WAF) string {
	switch {
	case len(w.Rules) > 0:
		return "rules"
	case len(w.RulesBefore) > 0:
		return "rules_before_crs"
	}
	return "mode"
}

func wafRules(w conf.WAF) waf.Rules {
	return waf.Rules{Paranoia: w.Paranoia, InboundThreshold: w.InboundThreshold, OutboundThreshold: w.OutboundThreshold,
		Exclusions: w.Exclusions, Before: w.RulesBefore, After: w.Rules, Responses: w.Responses}
}

func wafPolicy(w conf.WAF, set *waf.Set) (proxy.WAF, error) {
	p := proxy.WAF{Mode: proxy.WAFDetect, Rules: set, Allow: prefixes(w.Allow), SkipStatic: w.SkipStatic,
		BodyLimit: int64(w.BodyLimit), BodyPass: w.BodyLimitAction == "pass", Status: w.Status}
	if w.Mode == "block" {
		p.Mode = proxy.WAFBlock
	}
	if w.Page != "" {
		page, err := os.ReadFile(w.Page)
		if err != nil {
			return proxy.WAF{}, err
		}
		p.Page = page
	}
	return p, nil
}

// siteError is a problem with the setting at path.
type siteError struct {
	path string
	err  error
}

func (e *siteError) Error() string { return e.path + ": " + e.err.Error() }
func (e *siteError) Unwrap() error { return e.err }

// located makes each siteError in err a FILE:LINE problem of the file
// raw was read from.
func located(err error, raw []byte, file string) error {
	if err == nil || raw == nil {
		return err
	}
	var out []error
	for _, e := range flatten(err) {
		var se *siteError
		if errors.As(e, &se) {
			e = conf.ErrorAt(raw, file, se.path, se.err)
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
