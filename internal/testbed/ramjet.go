package testbed

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ramjet is one `ramjet serve` on 127.0.0.1 ports chosen by NewRamjet.
type Ramjet struct {
	URL       string // http://127.0.0.1:port of the main listener
	Addr      string // 127.0.0.1:port of the main listener
	AdminURL  string // http://127.0.0.1:port of the admin listener
	AdminAddr string // 127.0.0.1:port of the admin listener

	// Binary is the program Start runs; empty means Binary(t).
	Binary string
	// Env is added to its environment (e.g. GOMAXPROCS=1).
	Env []string

	p *proc
}

// NewRamjet chooses a node's ports without starting it, for configs that
// must name them first (WordPress's wp-config.php names the admin URL).
func NewRamjet(t testing.TB) *Ramjet {
	t.Helper()
	ports := FreePorts(t, 2)
	r := &Ramjet{Addr: loopback(ports[0]), AdminAddr: loopback(ports[1])}
	r.URL, r.AdminURL = "http://"+r.Addr, "http://"+r.AdminAddr
	return r
}

// StartRamjet runs `ramjet serve` with args (flags, or --config FILE) on
// ports of its own, choosing new ones when one was taken meanwhile, and
// returns once /healthz answers; see Start.
func StartRamjet(t testing.TB, args ...string) *Ramjet {
	t.Helper()
	var r *Ramjet
	err := retryPorts(func() (bool, error) {
		r = NewRamjet(t)
		return r.start(t, args)
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Start runs `ramjet serve --listen Addr --admin AdminAddr args...` (the
// flags override a config file's listen and admin.listen) and waits until
// /healthz answers 200. At cleanup it sends SIGTERM and fails the test
// unless ramjet exits with status 0 within StopTimeout; its output is
// logged when the test failed.
func (r *Ramjet) Start(t testing.TB, args ...string) {
	t.Helper()
	if _, err := r.start(t, args); err != nil {
		t.Fatal(err)
	}
}

func (r *Ramjet) start(t testing.TB, args []string) (retry bool, err error) {
	t.Helper()
	bin := r.Binary
	if bin == "" {
		bin = Binary(t)
	}
	argv := append([]string{"serve", "--listen", r.Addr, "--admin", r.AdminAddr}, args...)
	p, err := startProc(procSpec{bin: bin, args: argv, env: r.Env})
	if err != nil {
		return false, err
	}
	if err := waitHealthy(p, r.AdminURL+"/healthz"); err != nil {
		p.stop(syscall.SIGKILL)
		out := p.out.String()
		return addrInUse(out), fmt.Errorf("testbed: ramjet %s: %w\n%s", strings.Join(argv, " "), err, out)
	}
	r.p = p
	t.Cleanup(func() { r.cleanup(t) })
	return false, nil
}

// waitHealthy polls url until it answers 200, p exits or startTimeout
// passes.
func waitHealthy(p *proc, url string) error {
	c := &http.Client{Timeout: time.Second}
	defer c.CloseIdleConnections()
	var last error
	ok := Poll(startTimeout, func() bool {
		if p.exited() {
			return true
		}
		resp, err := c.Get(url)
		if err != nil {
			last = err
			return false
		}
		var h struct{ Pid int }
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err == nil && h.Pid != p.cmd.Process.Pid {
			// Another process holds the admin port (a parallel test's
			// ramjet bound it first): this one is about to fail to bind.
			last = fmt.Errorf("%s: answered by pid %d, not %d", url, h.Pid, p.cmd.Process.Pid)
			return false
		}
		last = fmt.Errorf("%s: %s", url, resp.Status)
		return resp.StatusCode == http.StatusOK
	})
	switch {
	case p.exited():
		return fmt.Errorf("exited (%v) before %s answered", p.err, url)
	case !ok:
		return fmt.Errorf("not healthy within %v: %w", startTimeout, last)
	}
	return nil
}

func (r *Ramjet) cleanup(t testing.TB) {
	if !r.p.exited() {
		if !r.p.stop(syscall.SIGTERM) {
			t.Errorf("ramjet did not exit within %v of SIGTERM", StopTimeout)
		}
		if code := r.p.exitCode(); code != 0 {
			t.Errorf("ramjet exited with status %d after SIGTERM, want 0", code)
		}
	}
	if t.Failed() {
		t.Logf("ramjet output:\n%s", r.Output())
	}
}

// Signal sends sig to the ramjet process.
func (r *Ramjet) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := r.p.signal(sig); err != nil {
		t.Fatalf("signal %v to ramjet: %v", sig, err)
	}
}

// Freeze stops ramjet with SIGSTOP and returns once every one of its
// threads has stopped, so nothing it does afterwards happened before.
// Thaw continues it; the caller thaws a frozen ramjet before its cleanup.
func (r *Ramjet) Freeze(t testing.TB) {
	t.Helper()
	if err := freeze(r.Pid()); err != nil {
		t.Fatalf("freeze ramjet: %v", err)
	}
}

// Thaw continues a ramjet stopped by Freeze.
func (r *Ramjet) Thaw(t testing.TB) {
	t.Helper()
	r.Signal(t, syscall.SIGCONT)
}

// Wait waits up to d for ramjet to exit and returns its exit code; it
// fails the test if ramjet is still running then.
func (r *Ramjet) Wait(t testing.TB, d time.Duration) int {
	t.Helper()
	if !r.p.wait(d) {
		t.Fatalf("ramjet still running after %v", d)
	}
	return r.p.exitCode()
}

// Output is everything ramjet wrote to stdout and stderr so far.
func (r *Ramjet) Output() string { return r.p.out.String() }

// WaitOutput waits up to d for substr in ramjet's output after byte
// offset from (len of an earlier Output(), or 0), and returns the offset
// just past it; it fails the test when substr does not come.
func (r *Ramjet) WaitOutput(t testing.TB, from int, substr string, d time.Duration) int {
	t.Helper()
	at := r.p.waitOutput(from, substr, d)
	if at < 0 {
		t.Fatalf("ramjet did not log %q within %v (exited=%v); output after offset %d:\n%s", substr, d, r.p.exited(), from, r.Output()[min(from, len(r.Output())):])
	}
	return at
}

// Pid is the ramjet process id.
func (r *Ramjet) Pid() int { return r.p.cmd.Process.Pid }

// Alive reports whether ramjet is still running.
func (r *Ramjet) Alive() bool { return !r.p.exited() }

// RunRamjet runs the ramjet binary with args to completion (at most d)
// and returns its exit code and combined output.
func RunRamjet(t testing.TB, d time.Duration, args ...string) (int, string) {
	t.Helper()
	p, err := startProc(procSpec{bin: Binary(t), args: args})
	if err != nil {
		t.Fatal(err)
	}
	if !p.wait(d) {
		p.stop(syscall.SIGKILL)
		t.Fatalf("ramjet %s still running after %v; output:\n%s", strings.Join(args, " "), d, p.out)
	}
	return p.exitCode(), p.out.String()
}

// WriteConfig writes yaml as dir/ramjet.yaml (dir: a new temporary
// directory when empty) and returns its path. It replaces an existing
// file by rename, as editors do, so a watching ramjet never reads a
// half-written file.
func WriteConfig(t testing.TB, dir, yaml string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "ramjet.yaml")
	if err := writeAtomic(path, yaml); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeAtomic(path, data string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("testbed: write %s: %w", path, err)
	}
	_, werr := tmp.WriteString(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name()) // best effort; the error below matters
		return fmt.Errorf("testbed: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("testbed: write %s: %w", path, err)
	}
	return nil
}
