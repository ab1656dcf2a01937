package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/proxy/waf"
)

// check validates a config file: exit 0, or 1 with one FILE:LINE: message
// per problem.
func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config file to validate")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" {
		fmt.Fprintln(stderr, "ramjet check: --config FILE is required")
		return 2
	}
	cfg, raw, err := conf.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	pc := proxyConfig(cfg)
	if _, err := attachWAF(&pc, cfg, waf.NewLibrary()); err != nil { // rule files must compile
		fmt.Fprintln(stderr, located(err, raw, *path))
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok\n", *path)
	return 0
}
