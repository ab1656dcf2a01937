package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
	"github.com/ramjet-proxy/ramjet/proxy/waf"
)

// check validates a config file, or with --htaccess a tree of .htaccess
// files: exit 0, or 1 with one FILE:LINE: message per problem.
func check(args []string, stdout, stderr io.Writer) int {
	path, tree, err := parseCheck(args, stderr)
	if err != nil {
		return 2
	}
	if tree != "" {
		return checkHtaccess(tree, stdout, stderr)
	}
	cfg, raw, err := conf.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	pc := proxyConfig(cfg)
	if _, err := attachWAF(&pc, cfg, waf.NewLibrary()); err != nil { // rule files must compile
		fmt.Fprintln(stderr, located(err, raw, path))
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok\n", path)
	return 0
}

// parseCheck reads check's command line: the config file, or the tree
// of .htaccess files; a bad one is reported on stderr.
func parseCheck(args []string, stderr io.Writer) (path, tree string, err error) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&path, "config", "", "config file to validate")
	fs.StringVar(&tree, "htaccess", "", "directory whose .htaccess files to validate (a docroot)")
	if err := fs.Parse(args); err != nil {
		return "", "", err
	}
	if path == "" && tree == "" {
		fmt.Fprintln(stderr, "ramjet check: --config FILE or --htaccess DIR is required")
		return "", "", errUsage
	}
	return path, tree, nil
}

// checkHtaccess prints every problem of the .htaccess files under dir:
// errors (500 under their directory), access rules that fail closed
// (403) and rules reading a variable ramjet does not know make it exit
// 1; ignored directives are warnings.
func checkHtaccess(dir string, stdout, stderr io.Writer) int {
	p, err := htaccess.CheckTree(dir, "")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, e := range p.Errors {
		fmt.Fprintln(stderr, e+" (requests under its directory get 500)")
	}
	for _, c := range p.Closed {
		fmt.Fprintln(stderr, c+" (fails closed: requests under its directory get 403)")
	}
	for _, u := range p.Unknown {
		fmt.Fprintln(stderr, u+" (fails closed: the rule is not applied and requests it matches bypass the cache; an [F] or [G] rule refuses them)")
	}
	for _, w := range p.Warnings {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	if len(p.Errors)+len(p.Closed)+len(p.Unknown) > 0 {
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d .htaccess files ok\n", dir, p.Files)
	return 0
}
