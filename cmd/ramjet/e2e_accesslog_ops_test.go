package main_test

// End-to-end tests of running the access log (issue 15 §2): logrotate
// with the shipped snippet and SIGUSR1, `ramjet reopen-logs`, a reload
// that moves the log to another file under load, and a disk that does
// not keep up.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// logrotateConf is conf/logrotate.d/ramjet for files in dir, signalling
// pid the way the unit's systemctl line does.
func logrotateConf(t *testing.T, dir string, pid int) string {
	t.Helper()
	b, err := os.ReadFile("../../conf/logrotate.d/ramjet")
	if err != nil {
		t.Fatal(err)
	}
	const signal = "systemctl kill --kill-whom=main --signal=USR1 ramjet.service >/dev/null 2>&1 || true"
	s := string(b)
	if !strings.Contains(s, "/var/log/ramjet/*.log {") || !strings.Contains(s, signal) {
		t.Fatalf("conf/logrotate.d/ramjet no longer has the path or the postrotate line this test replaces:\n%s", s)
	}
	s = strings.Replace(s, "/var/log/ramjet/*.log {", dir+"/*.log {", 1)
	s = strings.Replace(s, signal, "kill -USR1 "+strconv.Itoa(pid), 1)
	path := filepath.Join(t.TempDir(), "ramjet.logrotate")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAccessLogReopensForLogrotate: the shipped logrotate snippet renames
// the file and sends SIGUSR1; ramjet writes on in a new file at the
// path, the old lines stay in the rotated one. `ramjet reopen-logs` does
// the same through the admin API, and needs the admin token.
func TestAccessLogReopensForLogrotate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--admin-token", "tok", "--config", testbed.WriteConfig(t, "", "access_log:\n  path: "+log+"\n"))
	c := newClient(t)
	page := rj.URL + "/static/page725.html"
	for range 2 {
		mustStatus(t, get(t, c, page), 200, "before the rotation")
	}
	waitLines(t, log, 2)

	const bin = "/usr/sbin/logrotate"
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s not found (install the Debian package logrotate): %v", bin, err)
	}
	from := len(rj.Output())
	cmd := exec.Command(bin, "-f", "-s", filepath.Join(dir, "logrotate.state"), logrotateConf(t, dir, rj.Pid()))
	if out, err := testbed.RunCmd(cmd, 30*time.Second); err != nil {
		t.Fatalf("logrotate: %v\n%s", err, out)
	}
	rj.WaitOutput(t, from, `msg="access logs reopened" trigger=SIGUSR1`, 10*time.Second)
	for range 3 {
		mustStatus(t, get(t, c, page), 200, "after the rotation")
	}
	waitLines(t, log, 3)
	if got := readLog(log + ".1"); len(got) != 2 {
		t.Errorf("rotated file (delaycompress: %s.1) holds %d lines, want the 2 from before", log, len(got))
	}

	if err := os.Rename(log, log+".manual"); err != nil {
		t.Fatal(err)
	}
	if code, out := testbed.RunRamjet(t, 10*time.Second, "reopen-logs", "--admin", rj.AdminURL); code == 0 || !strings.Contains(out, "401") {
		t.Errorf("reopen-logs without the token: exit %d, %q; want a failure naming 401", code, out)
	}
	if code, out := testbed.RunRamjet(t, 10*time.Second, "reopen-logs", "--admin", rj.AdminURL, "--token", "tok"); code != 0 {
		t.Fatalf("reopen-logs: exit %d: %s", code, out)
	}
	mustStatus(t, get(t, c, page), 200, "after reopen-logs")
	waitLines(t, log, 1)
	if got := readLog(log + ".manual"); len(got) != 3 {
		t.Errorf("the file moved away holds %d lines, want the 3 from before reopen-logs", len(got))
	}
}

// TestAccessLogReloadToAnotherFileLosesNoLine: clients keep requesting
// while a reload moves the log to another file; every answer has its
// line in one of the two files, none is dropped, and ramjet closes the
// old file once the requests that began before the reload have logged.
func TestAccessLogReloadToAnotherFileLosesNoLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	o := startOrigin(t)
	cfg := testbed.WriteConfig(t, dir, "access_log:\n  path: "+a+"\n")
	rj := startRamjet(t, o.URL, "--config", cfg)
	var answered atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			c := newClient(t)
			url := rj.URL + "/static/page725.html?client=" + strconv.Itoa(i)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := tryDo(c, http.MethodGet, url, nil); err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
				answered.Add(1)
			}
		})
	}
	testbed.Poll(10*time.Second, func() bool { return answered.Load() >= 300 })
	from := len(rj.Output())
	testbed.WriteConfig(t, dir, "access_log:\n  path: "+b+"\n")
	rj.WaitOutput(t, from, "config reloaded", 10*time.Second)
	after := answered.Load()
	testbed.Poll(10*time.Second, func() bool { return answered.Load() >= after+300 })
	close(stop)
	wg.Wait()

	total := int(answered.Load())
	var inA, inB int
	testbed.Poll(10*time.Second, func() bool {
		inA, inB = len(readLog(a)), len(readLog(b))
		return inA+inB >= total
	})
	if inA+inB != total || inA == 0 || inB == 0 {
		t.Errorf("%d lines in the old file and %d in the new for %d answers", inA, inB, total)
	}
	if n := metricValue(t, rj.AdminURL, "ramjet_access_log_dropped_total"); n != 0 {
		t.Errorf("ramjet_access_log_dropped_total %v, want 0", n)
	}
	if !testbed.Poll(10*time.Second, func() bool { return !hasOpen(rj.Pid(), a) }) {
		t.Errorf("ramjet still has %s open after the reload drained", a)
	}
}

// hasOpen reports whether process pid has path open.
func hasOpen(pid int, path string) bool {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == path {
			return true
		}
	}
	return false
}

// metricValue reads one sample from /metrics; a missing one fails.
func metricValue(t testing.TB, adminURL, name string) float64 {
	t.Helper()
	r := get(t, newClient(t), adminURL+"/metrics")
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s %q: %v", name, v, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// slowDisk is a named pipe whose read end the test holds without reading:
// once the pipe holds 64 KiB, ramjet's writes block, as on a disk that
// does not keep up. Drain lets them through; a test registers it after
// starting ramjet.
type slowDisk struct {
	path string
	r    *os.File
	once sync.Once
}

func newSlowDisk(t *testing.T) *slowDisk {
	t.Helper()
	d := &slowDisk{path: filepath.Join(t.TempDir(), "slow.log")}
	if err := syscall.Mkfifo(d.path, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(d.path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // an open for reading that does not wait for a writer
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(int(r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	d.r = r
	return d
}

// Drain reads the pipe to its end from now on, so that ramjet can write
// everything and stop.
func (d *slowDisk) Drain() {
	d.once.Do(func() {
		go func() {
			io.Copy(io.Discard, d.r) // until ramjet closes its end
			d.r.Close()
		}()
	})
}

// TestAccessLogOnASlowDiskDropsLinesNotRequests: with the log file not
// taking writes, requests keep being answered at full speed and without
// errors; the lines that do not fit the buffer are counted in
// ramjet_access_log_dropped_total.
func TestAccessLogOnASlowDiskDropsLinesNotRequests(t *testing.T) {
	t.Parallel()
	disk := newSlowDisk(t)
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "access_log:\n  path: "+disk.path+"\n"))
	t.Cleanup(disk.Drain) // before ramjet's own cleanup stops it (cleanups run last first): it writes its lines as it stops
	page := rj.URL + "/static/page725.html"
	mustStatus(t, get(t, newClient(t), page), 200, "warm-up")
	var runs []testbed.WrkResult
	for len(runs) < 30 && metricValue(t, rj.AdminURL, "ramjet_access_log_dropped_total") == 0 {
		runs = append(runs, testbed.Wrk(t, page, 16, time.Second))
	}
	if metricValue(t, rj.AdminURL, "ramjet_access_log_dropped_total") == 0 {
		t.Fatalf("no line dropped after %d wrk runs against a log that takes no writes", len(runs))
	}
	runs = append(runs, testbed.Wrk(t, page, 16, time.Second)) // with the buffer full
	for i, r := range runs {
		if r.Errors+r.SocketErrors != 0 || r.Requests == 0 {
			t.Errorf("wrk run %d: %d requests, %d errors, %d socket errors:\n%s", i, r.Requests, r.Errors, r.SocketErrors, r.Output)
		}
	}
	first, last := runs[0].Requests, runs[len(runs)-1].Requests
	if last < first/4 {
		t.Errorf("requests slowed down while lines were dropped: %d in the first second, %d with the buffer full", first, last)
	}
}

// TestAccessLogToStdout: "stdout" writes the lines to standard output
// (the process log is on standard error), as a container's log driver
// wants them.
func TestAccessLogToStdout(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "access_log:\n  path: stdout\n  format: json\n"))
	mustStatus(t, get(t, newClient(t), rj.URL+"/static/page725.html?to=stdout"), 200, "GET")
	rj.WaitOutput(t, 0, `"request_uri":"/static/page725.html?to=stdout","server_protocol":"HTTP/1.1","status":200,"body_bytes_sent":725`, 10*time.Second)
}
