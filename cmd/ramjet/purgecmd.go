package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
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
	r, a, err := parsePurge(args, stderr)
	if err != nil {
		return 2
	}
	base, tok, err := purgeAuth(a.adminFlags, a.tokenFile)
	if err != nil {
		fmt.Fprintln(stderr, "ramjet purge:", err)
		return 2
	}
	res, err := purge.Send(context.Background(), purge.ClientConfig{Admin: base, Token: tok, Timeout: a.timeout}, r)
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

// purgeAuth is where a purge goes and the token it carries: a token given
// on the command line is readable by every local user (/proc/PID/cmdline),
// so the config file (the operator's) and a token file (a site owner's)
// are the ways that keep it private.
func purgeAuth(f adminFlags, tokenFile string) (base, tok string, err error) {
	if f.token != "" && tokenFile != "" {
		return "", "", fmt.Errorf("--token and --token-file both name a token: give one")
	}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", "", fmt.Errorf("reading the token: %w", err)
		}
		if f.token = strings.TrimSpace(string(b)); f.token == "" {
			return "", "", fmt.Errorf("%s holds no token", tokenFile)
		}
	}
	return adminOf(f)
}

// purgeArgs is how purge reaches the node and with which token.
type purgeArgs struct {
	adminFlags
	tokenFile string
	timeout   time.Duration
}

// parsePurge reads purge's command line: what to purge and how to reach
// the node; a bad one is reported on stderr.
func parsePurge(args []string, stderr io.Writer) (purge.Request, purgeArgs, error) {
	fs := flag.NewFlagSet("purge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var r purge.Request
	var a purgeArgs
	var tags, urls, prefixes listFlag
	a.register(fs)
	fs.StringVar(&a.tokenFile, "token-file", "", "read the bearer token from this file (a site's admin_token_file)")
	fs.Var(&tags, "tag", "purge entries carrying this tag (repeatable)")
	fs.Var(&urls, "url", "purge every variant of this URL (absolute, or a path with --host; repeatable)")
	fs.Var(&prefixes, "prefix", "purge every URL under this prefix (repeatable)")
	fs.BoolVar(&r.All, "all", false, "purge everything")
	fs.BoolVar(&r.Soft, "soft", false, "mark stale instead of removing (served stale while one request refreshes)")
	fs.StringVar(&r.Host, "host", "", "host for path-only --url and --prefix; empty means every host")
	fs.DurationVar(&a.timeout, "timeout", 10*time.Second, "how long to wait for the node")
	if err := fs.Parse(args); err != nil {
		return r, a, err
	}
	r.Tags, r.URLs, r.Prefixes = tags, urls, prefixes
	if !r.All && len(r.Tags)+len(r.URLs)+len(r.Prefixes) == 0 {
		fmt.Fprintln(stderr, "ramjet purge: name something to purge: --tag, --url, --prefix or --all")
		return r, a, errUsage
	}
	return r, a, nil
}
