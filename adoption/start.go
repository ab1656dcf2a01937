package adoption

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Ramjet starts ramjet processes: Bin with Args, its output appended to
// Log.
type Ramjet struct {
	Bin  string
	Args []string // "serve", "--config", FILE
	Log  string
}

// StartOn starts ramjet on the listening sockets socks (named "tcp:ADDR"
// as its config names them) through its handover variables, in a
// session of its own so that it outlives this process, and returns its
// pid once it says it serves.
func (r Ramjet) StartOn(ctx context.Context, socks []*os.File, names []string) (int, error) {
	rd, wr, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("adoption: start ramjet: %w", err)
	}
	defer rd.Close()
	log, err := os.OpenFile(r.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		_ = wr.Close() // not started
		return 0, fmt.Errorf("adoption: ramjet's log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(r.Bin, r.Args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = append(append([]*os.File{}, socks...), wr)
	cmd.Env = append(os.Environ(), "RAMJET_HANDOVER_FDS="+strings.Join(names, " "),
		"RAMJET_HANDOVER_READY="+strconv.Itoa(3+len(socks)))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	_ = wr.Close() // the child holds its end
	if err != nil {
		return 0, fmt.Errorf("adoption: start ramjet: %w", err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release() // it outlives us
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(rd).ReadString('\n')
		ready <- line == "ready\n"
	}()
	select {
	case ok := <-ready:
		if ok {
			return pid, nil
		}
	case <-time.After(time.Minute):
	case <-ctx.Done():
	}
	_ = syscall.Kill(pid, syscall.SIGKILL) // it did not serve
	b, _ := os.ReadFile(r.Log)
	return 0, fmt.Errorf("adoption: ramjet did not start serving (its log %s):\n%s", r.Log, tail(string(b), 2000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
