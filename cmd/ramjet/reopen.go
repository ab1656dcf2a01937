package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ramjet-proxy/ramjet/conf"
)

// reopenLogsCmd asks the running daemon, through its admin API, to open
// its access log files again (logrotate's postrotate, or an admin after
// moving a file). The API rather than a signal: ramjet has no pid file
// (systemd runs it, perhaps in a container or as another user), and the
// API says whether every file could be opened, which a signal cannot.
// The admin address and token come from the flags or from the config
// file, so a script needs neither on its command line.
func reopenLogsCmd(args []string, stdout, stderr io.Writer) int {
	a, err := parseReopenLogs(args, stderr)
	if err != nil {
		return 2
	}
	base, tok, err := adminOf(a.adminFlags)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	msg, err := postReopen(base, tok, a.timeout)
	if err != nil {
		fmt.Fprintln(stderr, "ramjet reopen-logs:", err)
		return 1
	}
	fmt.Fprint(stdout, msg)
	return 0
}

// adminFlags are how a command reaches the running daemon's admin API:
// --config, --admin and --token (purge, reopen-logs, top).
type adminFlags struct{ config, admin, token string }

// register defines the flags on fs.
func (f *adminFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "read admin.listen and the operator's admin.token from this config file (keeps the token off the command line)")
	fs.StringVar(&f.admin, "admin", "", "admin listener base URL (default: the config's admin.listen, else http://127.0.0.1:9090)")
	fs.StringVar(&f.token, "token", "", "admin bearer token (default: the config's admin.token; visible to every local user in the process list: prefer --config)")
}

// adminOf is the admin API's base URL and token: the flags' when given,
// else the config file's admin.listen and admin.token (config ""
// none), else http://127.0.0.1:9090 without a token. A token read from
// the config is on no command line, where every local user would see it.
func adminOf(f adminFlags) (base, tok string, err error) {
	base = "http://127.0.0.1:9090"
	if f.config != "" {
		cfg, _, err := conf.Load(f.config)
		if err != nil {
			return "", "", err
		}
		base, tok = adminURL(cfg.Admin.Listen), cfg.Admin.Token
	}
	if f.admin != "" {
		base = f.admin
	}
	if f.token != "" {
		tok = f.token
	}
	return base, tok, nil
}

// adminURL is the base URL of an admin listen address (":9090" is
// reached on loopback).
func adminURL(listen string) string {
	if strings.HasPrefix(listen, ":") {
		listen = "127.0.0.1" + listen
	}
	return "http://" + listen
}

// postReopen sends POST /reopen-logs and returns the daemon's answer.
func postReopen(base, token string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+"/reopen-logs", nil)
	if err != nil {
		return "", fmt.Errorf("admin URL %q: %w", base, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("post %s: %w", req.URL, err)
	}
	defer resp.Body.Close() // read-only body: a close error changes nothing
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", fmt.Errorf("read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// reopenArgs is reopen-logs' command line.
type reopenArgs struct {
	adminFlags
	timeout time.Duration
}

// parseReopenLogs reads reopen-logs' command line; a bad one is reported
// on stderr.
func parseReopenLogs(args []string, stderr io.Writer) (reopenArgs, error) {
	var a reopenArgs
	fs := flag.NewFlagSet("reopen-logs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	fs.DurationVar(&a.timeout, "timeout", 10*time.Second, "how long to wait for the daemon")
	return a, fs.Parse(args)
}
