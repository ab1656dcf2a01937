package deb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// boxCommandTimeout bounds one command run inside the box: a dpkg -i
// with its service start, or a stop that drains.
const boxCommandTimeout = 2 * time.Minute

// box is a running deb/box: systemd as PID 1 of its own namespaces, on an
// overlay of this machine's root. Commands run inside it with nsenter.
type box struct {
	cmd    *exec.Cmd
	out    bytes.Buffer  // deb/box's own output; read only after done
	done   chan struct{} // closed once deb/box has exited
	init   int           // systemd's PID as this machine sees it
	cgroup string        // the box's cgroup directory
}

// startBox boots deb/box on dir (which holds share/, bound at
// /run/box-share) in a new cgroup and waits until its systemd has finished booting. The
// box is killed, and its cgroup removed, at cleanup.
func startBox(t *testing.T, dir string) *box {
	t.Helper()
	root := cgroup2Root(t)
	removeStaleCgroups(t, root)
	name := fmt.Sprintf("ramjet-box-%d-%d", os.Getpid(), time.Now().UnixNano())
	b := &box{done: make(chan struct{}), cgroup: filepath.Join(root, name)}
	b.cmd = exec.Command("./box", b.cgroup, dir)
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.out
	// deb/box becomes unshare, whose child (the box's init) gets SIGKILL
	// when unshare dies: a test process that dies takes the box along.
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("start deb/box: %v", err)
	}
	go func() {
		_ = b.cmd.Wait() // its exit is the failure reported below, with its output
		close(b.done)
	}()
	t.Cleanup(func() { b.close(t) })
	if !testbed.Poll(30*time.Second, b.findInit) || b.init == 0 {
		t.Fatalf("deb/box started no systemd within 30s; its output:\n%s", b.kill(t))
	}
	// systemctl answers once systemd has opened its socket; --wait then
	// blocks until the boot job is done ("running", or "degraded" when a
	// unit of the machine's own failed in the box).
	var state string
	ok := testbed.Poll(60*time.Second, func() bool {
		out, _ := b.run("systemctl", "is-system-running", "--wait")
		state = strings.TrimSpace(out)
		return state == "running" || state == "degraded"
	})
	if !ok {
		t.Fatalf("the box's systemd did not finish booting: is-system-running says %q; deb/box:\n%s", state, b.kill(t))
	}
	if state == "degraded" {
		failed, _ := b.run("systemctl", "--failed", "--no-pager")
		t.Logf("box booted degraded (units of this machine's image, not ramjet's):\n%s", failed)
	}
	return b
}

// findInit reports whether the box's systemd runs, recording its PID: the
// child of unshare, once it has become systemd.
func (b *box) findInit() bool {
	select {
	case <-b.done:
		return true // startBox reports the missing init
	default:
	}
	pid := b.cmd.Process.Pid
	kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil || len(bytes.Fields(kids)) == 0 {
		return false
	}
	child, err := strconv.Atoi(string(bytes.Fields(kids)[0]))
	if err != nil {
		return false
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", child))
	if err != nil || strings.TrimSpace(string(comm)) != "systemd" {
		return false
	}
	b.init = child
	return true
}

// run runs a command inside the box as root and returns its combined
// output.
func (b *box) run(args ...string) (string, error) {
	return b.runInput("", args...)
}

// runInput is run with stdin.
func (b *box) runInput(stdin string, args ...string) (string, error) {
	if b.init == 0 {
		return "", fmt.Errorf("box has no init")
	}
	ctx, cancel := context.WithTimeout(context.Background(), boxCommandTimeout)
	defer cancel()
	nsenter := append([]string{"-t", strconv.Itoa(b.init), "-a", "-r", "-w", "--"}, args...)
	cmd := exec.CommandContext(ctx, "nsenter", nsenter...)
	cmd.Stdin = strings.NewReader(stdin)
	// The box's own environment, not the test's (GOFLAGS, TMPDIR, ...).
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs a command inside the box and fails the test if it fails.
func (b *box) must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := b.run(args...)
	if err != nil {
		t.Fatalf("in the box: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// sh runs a shell script inside the box and fails the test if it fails.
func (b *box) sh(t *testing.T, script string) string {
	t.Helper()
	return b.must(t, "sh", "-ec", script)
}

// write replaces a file inside the box, keeping its owner and mode.
func (b *box) write(t *testing.T, path, data string) {
	t.Helper()
	if out, err := b.runInput(data, "sh", "-ec", `cat >"$1"`, "sh", path); err != nil {
		t.Fatalf("in the box: write %s: %v\n%s", path, err, out)
	}
}

// kill kills the box (its init gets SIGKILL, and with it every process
// and mount inside), waits for it and returns what deb/box printed.
func (b *box) kill(t *testing.T) string {
	t.Helper()
	if err := b.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill deb/box: %v", err)
	}
	<-b.done
	return b.out.String()
}

// close kills the box and removes its cgroup.
func (b *box) close(t *testing.T) {
	t.Helper()
	b.kill(t)
	var err error
	if !testbed.Poll(10*time.Second, func() bool { err = removeCgroup(b.cgroup); return err == nil }) {
		t.Errorf("remove the box's cgroup: %v", err)
	}
}

// removeCgroup removes a cgroup directory and those below it, deepest
// first; a cgroup that still holds a process cannot be removed.
func removeCgroup(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syscall.Rmdir(dirs[i]); err != nil && err != syscall.ENOENT {
			return fmt.Errorf("rmdir %s: %w", dirs[i], err)
		}
	}
	return nil
}

// cgroup2Root returns the cgroup v2 mount the box's cgroup goes in:
// /sys/fs/cgroup itself on a unified system, /sys/fs/cgroup/unified on a
// hybrid one (this machine's).
func cgroup2Root(t *testing.T) string {
	t.Helper()
	const cgroup2Magic = 0x63677270 // CGROUP2_SUPER_MAGIC
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st syscall.Statfs_t
		if syscall.Statfs(dir, &st) == nil && st.Type == cgroup2Magic {
			return dir
		}
	}
	t.Fatal("no cgroup v2 mount at /sys/fs/cgroup or /sys/fs/cgroup/unified: the box's systemd needs one")
	return ""
}

// removeStaleCgroups removes the cgroups of boxes whose test process
// (named in the cgroup's name, ramjet-box-PID-...) is gone.
func removeStaleCgroups(t *testing.T, root string) {
	t.Helper()
	stale, err := filepath.Glob(filepath.Join(root, "ramjet-box-*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range stale {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(dir), "ramjet-box-"), "-")
		if _, err := os.Stat("/proc/" + pid); err == nil {
			continue // its test still runs
		}
		if err := removeCgroup(dir); err != nil {
			t.Logf("cgroup %s left alone: %v", dir, err)
		}
	}
}
