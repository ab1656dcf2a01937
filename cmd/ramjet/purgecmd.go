package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ramjet-proxy/ramjet/purge"
)

// listFlag collects a repeatable flag (--tag a --tag b).
type listFlag []string

func (l *listFlag) String() string     { return fmt.Sprint([]string(*l)) }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// purgeCmd sends one purge to a node's admin API; with Redis configured
// that node fans it out to every other node.
func purgeCmd(args []string, stdout, stderr io.Writer) int {
	r, client, err := parsePurge(args, stderr)
	if err != nil {
		return 2
	}
	res, err := purge.Send(context.Background(), client, r)
	if err != nil {
		fmt.Fprintln(stderr, "ramjet purge:", err)
		return 1
	}
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(stderr, "ramjet purge:", err)
		return 1
	}
	fmt.Fprintln(stdout, string(out))
	return 0
}

// parsePurge reads purge's command line: what to purge and how to reach
// the node; a bad one is reported on stderr.
func parsePurge(args []string, stderr io.Writer) (purge.Request, purge.ClientConfig, error) {
	fs := flag.NewFlagSet("purge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var r purge.Request
	c := purge.ClientConfig{}
	var tags, urls, prefixes listFlag
	fs.StringVar(&c.Admin, "admin", "http://127.0.0.1:9090", "admin listener base URL")
	fs.StringVar(&c.Token, "token", "", "admin bearer token")
	fs.Var(&tags, "tag", "purge entries carrying this tag (repeatable)")
	fs.Var(&urls, "url", "purge every variant of this URL (absolute, or a path with --host; repeatable)")
	fs.Var(&prefixes, "prefix", "purge every URL under this prefix (repeatable)")
	fs.BoolVar(&r.All, "all", false, "purge everything")
	fs.BoolVar(&r.Soft, "soft", false, "mark stale instead of removing (served stale while one request refreshes)")
	fs.StringVar(&r.Host, "host", "", "host for path-only --url and --prefix; empty means every host")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "how long to wait for the node")
	if err := fs.Parse(args); err != nil {
		return r, c, err
	}
	r.Tags, r.URLs, r.Prefixes = tags, urls, prefixes
	if !r.All && len(r.Tags)+len(r.URLs)+len(r.Prefixes) == 0 {
		fmt.Fprintln(stderr, "ramjet purge: name something to purge: --tag, --url, --prefix or --all")
		return r, c, errUsage
	}
	return r, c, nil
}
