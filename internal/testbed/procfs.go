package testbed

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Readers of /proc, for tests that wait on a process's state instead of
// sleeping. Linux only, like the rest of testbed.

// statFields returns the command name of /proc/PID/stat and the fields
// after it (state first), or ok false when the process is gone.
func statFields(pid int) (comm string, rest []string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", nil, false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", nil, false
	}
	return string(b[open+1 : end]), strings.Fields(string(b[end+1:])), true
}

// ProcState is the state letter of /proc/PID/stat ("R", "S", "T" for
// stopped, "Z", …), or "" when the process is gone.
func ProcState(pid int) string {
	_, rest, ok := statFields(pid)
	if !ok || len(rest) == 0 {
		return ""
	}
	return rest[0]
}

// WChan is the kernel function pid sleeps in ("hrtimer_nanosleep" for a
// sleep, "do_epoll_wait", …), "0" when running, "" when gone.
func WChan(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	if err != nil {
		return ""
	}
	return string(b)
}

// RSS is the resident set size of pid in bytes (VmRSS).
func RSS(pid int) (int64, error) {
	v, err := statusField(pid, "status", "VmRSS:")
	if err != nil {
		return 0, err
	}
	kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("testbed: VmRSS %q: %w", v, err)
	}
	return kb << 10, nil
}

// ReadBytes is how many bytes pid has read through read(2) and the like,
// sockets included (rchar of /proc/PID/io).
func ReadBytes(pid int) (int64, error) {
	v, err := statusField(pid, "io", "rchar:")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("testbed: rchar %q: %w", v, err)
	}
	return n, nil
}

// statusField is the trimmed value of the line starting with key in
// /proc/PID/file.
func statusField(pid int, file, key string) (string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return "", fmt.Errorf("testbed: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, key); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("testbed: no %s line in /proc/%d/%s", key, pid, file)
}

// Child is a process and its command name.
type Child struct {
	PID  int
	Comm string // as /proc/PID/stat shows it: at most 15 bytes
}

// Children lists the processes whose parent is ppid.
func Children(ppid int) []Child {
	dirs, _ := filepath.Glob("/proc/[0-9]*") // the pattern is valid
	var out []Child
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		comm, rest, ok := statFields(pid)
		if !ok || len(rest) < 2 || rest[1] != strconv.Itoa(ppid) {
			continue // gone meanwhile, or another parent's
		}
		out = append(out, Child{PID: pid, Comm: comm})
	}
	return out
}

// PSS is the proportional set size of the processes pids, summed, in
// bytes (Pss of /proc/PID/smaps_rollup): a page shared by n processes
// counts 1/n in each, so the sum is what the processes cost together,
// where RSS counts every shared page once per process.
func PSS(pids ...int) (int64, error) {
	var total int64
	for _, pid := range pids {
		v, err := statusField(pid, "smaps_rollup", "Pss:")
		if err != nil {
			return 0, err
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, " kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("testbed: Pss %q: %w", v, err)
		}
		total += kb << 10
	}
	return total, nil
}

// Descendants lists the processes below pid: its children, theirs, and
// so on (not pid itself).
func Descendants(pid int) []int {
	var out []int
	for _, c := range Children(pid) {
		out = append(out, c.PID)
		out = append(out, Descendants(c.PID)...)
	}
	return out
}

// CPUTime is the CPU time pid has used, user and system (utime and
// stime of /proc/PID/stat, 10 ms resolution), 0 when it is gone: what a
// server spent on a load, steadier than its rate on a shared machine.
func CPUTime(pid int) time.Duration {
	_, rest, ok := statFields(pid)
	if !ok || len(rest) < 13 {
		return 0
	}
	// rest[0] is field 3 (state): utime and stime are fields 14 and 15.
	ut, _ := strconv.ParseInt(rest[11], 10, 64)
	st, _ := strconv.ParseInt(rest[12], 10, 64)
	const userHZ = 100 // USER_HZ, the unit of both
	return time.Duration(ut+st) * time.Second / userHZ
}

// AllThreadsStopped reports whether every thread of pid is stopped ("T",
// or "t" when traced). kill(SIGSTOP) returns before the process stops: on
// a busy machine its threads run on until each is scheduled again, so a
// test that needs the process frozen waits for this.
func AllThreadsStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			return false
		}
		if s := taskState(pid, tid); s != "T" && s != "t" {
			return false
		}
	}
	return true
}

// taskState is the state letter of one thread of pid, "" when gone.
func taskState(pid, tid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
	if err != nil {
		return ""
	}
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return ""
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// freeze sends SIGSTOP to pid and waits (up to 10 s) until all of its
// threads have stopped.
func freeze(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("SIGSTOP %d: %w", pid, err)
	}
	if !Poll(10*time.Second, func() bool { return AllThreadsStopped(pid) }) {
		return fmt.Errorf("process %d not stopped 10 s after SIGSTOP (state %s)", pid, ProcState(pid))
	}
	return nil
}
