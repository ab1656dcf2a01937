package testbed

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// WrkResult is what one wrk run reports.
type WrkResult struct {
	Requests int
	// Errors are responses with a status of 400 or more: wrk's
	// "Non-2xx or 3xx responses".
	Errors int
	// SocketErrors sums wrk's connect, read, write and timeout errors.
	SocketErrors int
	Output       string
}

var (
	wrkRequests = regexp.MustCompile(`(\d+) requests in `)
	wrkErrors   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkSocket   = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// Wrk loads url with wrk for d (whole seconds, at least one: wrk's unit)
// on conns connections (two threads, one a
// core of the machines the tests run on) and returns its counts; extra
// arguments go before the URL (e.g. "-s", script). A request gets 10 s
// before wrk counts it as a timeout, so a loaded machine is no error.
// wrk missing fails the test naming the Debian package.
func Wrk(t testing.TB, url string, conns int, d time.Duration, extra ...string) WrkResult {
	t.Helper()
	bin, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatalf("testbed: wrk not found (install the Debian package wrk): %v", err)
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	args := []string{"-t2", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(secs) + "s", "--timeout", "10s"}
	args = append(append(args, extra...), url)
	out, err := RunCmd(exec.Command(bin, args...), d+30*time.Second)
	if err != nil {
		t.Fatalf("testbed: wrk %q: %v\n%s", args, err, out)
	}
	r := WrkResult{Output: out}
	m := wrkRequests.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("testbed: wrk printed no request count:\n%s", out)
	}
	r.Requests, _ = strconv.Atoi(m[1]) // \d+ always parses
	if m := wrkErrors.FindStringSubmatch(out); m != nil {
		r.Errors, _ = strconv.Atoi(m[1])
	}
	if m := wrkSocket.FindStringSubmatch(out); m != nil {
		for _, v := range m[1:] {
			n, _ := strconv.Atoi(v)
			r.SocketErrors += n
		}
	}
	return r
}
