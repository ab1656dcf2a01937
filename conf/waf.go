package conf

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
)

// WAF is a site's web application firewall: the OWASP Core Rule Set
// (embedded in the binary) with the site's paranoia level, thresholds,
// exclusions and rule files, run on the requests that may reach the
// application — never on fresh cache hits. Sites whose rule settings
// (paranoia, thresholds, exclusions, rule files, responses) are equal
// share one compiled rule set.
type WAF struct {
	// Mode is "off" (the default), "detect" (evaluate and log, never
	// block) or "block".
	Mode string `yaml:"mode"`
	// Paranoia is the CRS paranoia level, 1 (few false positives) to 4.
	Paranoia int `yaml:"paranoia"`
	// InboundThreshold and OutboundThreshold are the CRS anomaly scores
	// at which a request (a response) is blocked: 5 is one critical match.
	InboundThreshold  int `yaml:"inbound_threshold"`
	OutboundThreshold int `yaml:"outbound_threshold"`
	// Exclusions name the built-in exclusion sets that keep known
	// applications working ("wordpress").
	Exclusions []string `yaml:"exclusions"`
	// Rules are SecLang files (ModSecurity syntax) loaded after the CRS:
	// SecRuleRemoveById, SecRuleUpdateTargetById and the site's own
	// SecRules. RulesBefore are loaded before it, for exclusions that act
	// at run time (ctl:ruleRemoveTargetById) on the CRS's first rules.
	Rules       []string `yaml:"rules"`
	RulesBefore []string `yaml:"rules_before_crs"`
	// Allow are client networks (CIDR or address) whose requests are not
	// inspected: the office, a monitoring probe.
	Allow []string `yaml:"allow"`
	// SkipStatic leaves the static files a docroot site serves itself
	// uninspected, as LiteSpeed does: they never reach PHP.
	SkipStatic bool `yaml:"skip_static"`
	// BodyLimit is how much of a request body is inspected; BodyLimitAction
	// says what happens to a larger one: "reject" (413) or "pass" (headers
	// inspected, the body passed uninspected and counted).
	BodyLimit       Size   `yaml:"body_limit"`
	BodyLimitAction string `yaml:"body_limit_action"`
	// Responses turns on response inspection (the CRS RESPONSE-95x data
	// leakage rules) for the site; off by default.
	Responses bool `yaml:"responses"`
	// Status is what a blocked request gets (403); Page, when set, is a
	// file whose content is the body (at most 64 KiB).
	Status int    `yaml:"status"`
	Page   string `yaml:"page"`
}

// WAFExclusions are the exclusion sets ramjet ships.
var WAFExclusions = []string{"wordpress"}

// WAFMaxBodyLimit bounds waf.body_limit: what is inspected is held in
// memory.
const WAFMaxBodyLimit = 64 * MiB

// WAFMaxPage bounds the size of waf.page.
const WAFMaxPage = 64 * KiB

func defaultWAF() WAF {
	return WAF{Mode: "off", Paranoia: 1, InboundThreshold: 5, OutboundThreshold: 4,
		BodyLimit: 8 * MiB, BodyLimitAction: "reject", Status: 403}
}

// On reports whether requests are inspected at all.
func (w *WAF) On() bool { return w.Mode == "detect" || w.Mode == "block" }

func (w WAF) clone() WAF {
	w.Exclusions = slices.Clone(w.Exclusions)
	w.Rules = slices.Clone(w.Rules)
	w.RulesBefore = slices.Clone(w.RulesBefore)
	w.Allow = slices.Clone(w.Allow)
	return w
}

// validate checks w under path (".waf" appended); for a host, base is the
// defaults' block: a block equal to it was checked there.
func (w *WAF) validate(p *problems, path string, base *WAF) {
	if base != nil && equalWAF(w, base) {
		return
	}
	path += ".waf"
	p.oneOf(path+".mode", w.Mode, "off", "detect", "block")
	if w.Paranoia < 1 || w.Paranoia > 4 {
		p.add(path+".paranoia", fmt.Sprintf("must be 1 to 4, got %d", w.Paranoia))
	}
	p.minInt(path+".inbound_threshold", w.InboundThreshold, 1)
	p.minInt(path+".outbound_threshold", w.OutboundThreshold, 1)
	for i, e := range w.Exclusions {
		ep := path + ".exclusions[" + strconv.Itoa(i) + "]"
		switch {
		case !slices.Contains(WAFExclusions, e):
			p.oneOf(ep, e, WAFExclusions...)
		case slices.Index(w.Exclusions, e) < i:
			p.add(ep, fmt.Sprintf("%q is already listed", e))
		}
	}
	p.ruleFiles(path+".rules", w.Rules)
	p.ruleFiles(path+".rules_before_crs", w.RulesBefore)
	for i, s := range w.Allow {
		if _, err := ParsePrefix(s); err != nil {
			p.add(path+".allow["+strconv.Itoa(i)+"]", err.Error())
		}
	}
	p.minSize(path+".body_limit", w.BodyLimit, KiB)
	if w.BodyLimit > WAFMaxBodyLimit {
		p.add(path+".body_limit", fmt.Sprintf("must be at most %s (it is held in memory), got %s", WAFMaxBodyLimit, w.BodyLimit))
	}
	p.oneOf(path+".body_limit_action", w.BodyLimitAction, "reject", "pass")
	if w.Status < 400 || w.Status > 599 {
		p.add(path+".status", fmt.Sprintf("must be a 4xx or 5xx status, got %d", w.Status))
	}
	if w.Page != "" {
		p.pageFile(path+".page", w.Page)
	}
}

// ruleFiles checks that each rule file is an absolute path to a regular
// file; whether it compiles is checked where the rules are compiled.
func (p *problems) ruleFiles(path string, files []string) {
	for i, f := range files {
		fp := path + "[" + strconv.Itoa(i) + "]"
		if !filepath.IsAbs(f) {
			p.add(fp, fmt.Sprintf("%q must be an absolute path", f))
			continue
		}
		switch st, err := os.Stat(f); {
		case err != nil:
			p.add(fp, err.Error())
		case !st.Mode().IsRegular():
			p.add(fp, fmt.Sprintf("%q is not a file", f))
		}
	}
}

func (p *problems) pageFile(path, f string) {
	if !filepath.IsAbs(f) {
		p.add(path, fmt.Sprintf("%q must be an absolute path", f))
		return
	}
	switch st, err := os.Stat(f); {
	case err != nil:
		p.add(path, err.Error())
	case !st.Mode().IsRegular():
		p.add(path, fmt.Sprintf("%q is not a file", f))
	case st.Size() > int64(WAFMaxPage):
		p.add(path, fmt.Sprintf("%q is larger than %s", f, WAFMaxPage))
	}
}

func equalWAF(a, b *WAF) bool { return reflect.DeepEqual(a, b) }
