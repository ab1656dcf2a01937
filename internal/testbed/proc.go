package testbed

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// startTimeout bounds how long a process may take to answer. Generous:
	// the machine is shared with other test runs.
	startTimeout = 20 * time.Second
	// StopTimeout is how long a process may take to exit after SIGTERM
	// before it is killed.
	StopTimeout = 10 * time.Second
)

// output collects a child's stdout and stderr, readable while it runs.
type output struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// proc is a started child process whose exit one goroutine observes.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *output
	done chan struct{} // closed once Wait returned; err is set then
	err  error
}

// procSpec is what startProc runs.
type procSpec struct {
	bin  string
	args []string
	dir  string   // working directory; "" for the test's
	env  []string // added to the environment
	// group puts the child in its own process group, stopped as a whole
	// (php-cgi with children: its parent alone would leave them running).
	group bool
}

func startProc(s procSpec) (*proc, error) {
	p := &proc{name: filepath.Base(s.bin), out: &output{}, done: make(chan struct{})}
	p.cmd = exec.Command(s.bin, s.args...)
	p.cmd.Dir = s.dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if len(s.env) > 0 {
		p.cmd.Env = append(os.Environ(), s.env...)
	}
	if s.group {
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("testbed: start %s: %w", s.bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to exit and reports whether it did.
func (p *proc) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// exitCode is valid once done is closed: -1 for death by signal.
func (p *proc) exitCode() int { return p.cmd.ProcessState.ExitCode() }

// signal sends sig to the process, or to its group when it has one.
func (p *proc) signal(sig syscall.Signal) error {
	if p.cmd.SysProcAttr != nil && p.cmd.SysProcAttr.Setpgid {
		return syscall.Kill(-p.cmd.Process.Pid, sig)
	}
	return p.cmd.Process.Signal(sig)
}

// stop sends sig, waits StopTimeout, then kills. It reports whether the
// process exited by itself.
func (p *proc) stop(sig syscall.Signal) bool {
	if p.exited() {
		return true
	}
	_ = p.signal(sig) // an already-exited process is fine
	if p.wait(StopTimeout) {
		return true
	}
	_ = p.signal(syscall.SIGKILL) // best effort; waited for below
	<-p.done
	return false
}

// waitOutput waits up to d for substr to appear in the output after byte
// offset from, and returns the offset just past it, or -1.
func (p *proc) waitOutput(from int, substr string, d time.Duration) int {
	at := -1
	Poll(d, func() bool {
		out := p.out.String()
		if from > len(out) {
			from = len(out)
		}
		if i := strings.Index(out[from:], substr); i >= 0 {
			at = from + i + len(substr)
			return true
		}
		return p.exited()
	})
	return at
}

// startListening starts s and waits until it listens on TCP addr. On
// failure it kills it and returns an error with logFiles and its output;
// retry says the port was taken meanwhile.
func startListening(s procSpec, addr string, logFiles ...string) (p *proc, retry bool, err error) {
	p, err = startProc(s)
	if err != nil {
		return nil, false, err
	}
	if err := waitListen(p, "tcp", addr); err != nil {
		p.stop(syscall.SIGKILL)
		logs := procLogs(p, logFiles...)
		taken := addrInUse(logs) || strings.Contains(logs, "Couldn't create FastCGI listen socket") // php-cgi's words
		return nil, taken, fmt.Errorf("%w\n%s", err, logs)
	}
	return p, false, nil
}

// procLogs is the content of each log file, then p's output.
func procLogs(p *proc, logFiles ...string) string {
	var b strings.Builder
	for _, f := range logFiles {
		data, _ := os.ReadFile(f) // a missing log is fine
		fmt.Fprintf(&b, "--- %s\n%s", filepath.Base(f), data)
	}
	fmt.Fprintf(&b, "--- %s output\n%s", p.name, p.out)
	return b.String()
}

// addrInUse reports whether output says a bind failed because the port
// was taken between choosing it and binding it.
func addrInUse(out string) bool {
	return strings.Contains(strings.ToLower(out), "address already in use")
}

// RunCmd runs cmd to completion within d and returns what it wrote to
// the stdout and stderr the caller left nil (both, combined, when neither
// is set); past d it kills cmd and returns an error.
func RunCmd(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out output
	if cmd.Stdout == nil {
		cmd.Stdout = &out
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &out
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("testbed: start %s: %w", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return out.String(), err
	case <-t.C:
		_ = cmd.Process.Kill() // best effort; reported below
		<-done
		return out.String(), fmt.Errorf("testbed: %s still running after %v", cmd.Path, d)
	}
}

var _ io.Writer = (*output)(nil)
