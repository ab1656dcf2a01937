package wpsite

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// wpScript is run with php -r inside an install (the opening tag off).
//
//go:embed wp.php
var wpScript string

// resultPrefix starts the script's last line; what WordPress or a plugin
// prints before it is not the answer.
const resultPrefix = "RAMJET-WP-RESULT "

// PHP runs wp.php in installs.
type PHP struct {
	// Binary is php-cli; "" = php on PATH.
	Binary string
	// Timeout bounds one run; 0 = one minute.
	Timeout time.Duration
}

// request is wp.php's stdin.
type request struct {
	Action    string `json:"action"`
	Path      string `json:"path"`
	Config    string `json:"config"`
	User      string `json:"user"`
	Host      string `json:"host"`
	PluginSrc string `json:"plugin_src,omitempty"`
	AdminURL  string `json:"admin_url,omitempty"`
	Token     string `json:"token,omitempty"`
}

// Status is what wp.php reports of an install.
type Status struct {
	Error string `json:"error"`
	// Cache is the active cache plugin: "ramjet-cache",
	// "litespeed-cache" or "".
	Cache string `json:"cache"`
	// Enabled is the plugin ramjet wp enable set up, or "".
	Enabled string `json:"enabled"`
	Home    string `json:"home"`
	// TokenConstant: wp-config.php defines RAMJET_ADMIN_TOKEN, which
	// wins over the token enable stores.
	TokenConstant bool `json:"token_constant"`
}

// What a run keeps of PHP's output, and how long it waits for the output
// to end once PHP has exited.
const (
	maxOutput = 64 << 10
	waitDelay = 2 * time.Second
)

// tail keeps the last max bytes written to it.
type tail struct {
	b   []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.b = append(t.b[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.b) + len(p) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	t.b = append(t.b, p...)
	return n, nil
}

func (t *tail) String() string { return string(t.b) }

// run runs wp.php with req as in's owner, in in.Path, and returns its
// answer; an answer carrying an error is returned as an error.
func (p PHP) run(ctx context.Context, in Install, req request) (Status, error) {
	cred, err := in.Owner.credential()
	if err != nil {
		return Status{}, fmt.Errorf("%s: %w", in.Path, err)
	}
	timeout := p.Timeout
	if timeout == 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	bin := p.Binary
	if bin == "" {
		bin = "php"
	}
	req.Path, req.Config, req.User = in.Path, in.Config, in.Owner.Name
	body, err := json.Marshal(req)
	if err != nil {
		return Status{}, err
	}
	cmd := exec.CommandContext(ctx, bin, "-d", "display_errors=stderr", "-d", "error_reporting=E_ALL & ~E_DEPRECATED & ~E_NOTICE",
		"-r", strings.TrimPrefix(wpScript, "<?php"))
	cmd.Dir = in.Path
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home(in), "LANG=C.UTF-8"}
	// Its own process group, so a terminal's ^C reaches ramjet, which
	// cancels ctx; and killed with ramjet should ramjet die first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// The install's code is its owner's and may be hostile: what it
	// started is killed with it, a child it left holding the output
	// does not keep ramjet waiting, and only the end of what it prints
	// is kept (the result is the last line).
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	cmd.Stdin = bytes.NewReader(body)
	stdout, stderr := &tail{max: maxOutput}, &tail{max: maxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := cmd.Run()
	st, ok := parseResult(stdout.String())
	switch {
	case !ok && runErr != nil:
		return st, fmt.Errorf("%s: php: %w: %s", in.Path, runErr, lastLines(stderr.String()+stdout.String(), 3))
	case !ok:
		return st, fmt.Errorf("%s: php printed no result: %s", in.Path, lastLines(stderr.String()+stdout.String(), 3))
	case st.Error != "":
		return st, fmt.Errorf("%s: %s", in.Path, st.Error)
	}
	return st, nil
}

func home(in Install) string {
	if in.Owner.Home != "" {
		return in.Owner.Home
	}
	return in.Path
}

// parseResult finds the last result line of out.
func parseResult(out string) (Status, bool) {
	i := strings.LastIndex(out, "\n"+resultPrefix)
	if i < 0 {
		return Status{}, false
	}
	line, _, _ := strings.Cut(out[i+1+len(resultPrefix):], "\n")
	var st Status
	if err := json.Unmarshal([]byte(line), &st); err != nil {
		return Status{}, false
	}
	return st, true
}

// lastLines is the end of a child's output, for an error message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return "no output"
	}
	return strings.Join(lines, " | ")
}
