// Package waf owns the web application firewall: the OWASP Core Rule Set
// v4 (embedded through coraza-coreruleset, run by the Coraza engine)
// compiled with a site's paranoia level, thresholds, exclusions and rule
// files into a Set; the Library that shares one Set between every site
// with the same rules, across reloads too; and the mapping of one
// fasthttp request (and, when a site asks, its response) onto a Coraza
// transaction, whose outcome is a Verdict: the rules that matched, the
// anomaly score, and whether the request is to be stopped.
//
// Which requests are inspected, and what a Verdict does to them, is the
// caller's (proxy's guard stage): a fresh cache hit never gets here. The
// package reads rule files only while compiling, does no network I/O,
// writes no audit log, and must not import proxy or conf.
package waf
