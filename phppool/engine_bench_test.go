package phppool

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// BenchmarkEngineChoice measures the two ways of running one opcache per
// pool that issue 18 weighed, with the same php.ini, the same 4 children
// and the same client (4 keep-alive Conns, one per child, each sending
// requests back to back): one php-cgi master with PHP_FCGI_CHILDREN=4
// (the engine the pool uses) against php-fpm with pm = static. It reports
// the PHP processes' CPU per request, which decides: the client is the
// same, so what differs is what each SAPI does per request. Run:
//
//	go test -run=NONE -bench=EngineChoice -benchtime=20000x ./phppool/
func BenchmarkEngineChoice(b *testing.B) {
	if testing.Short() {
		b.Skip("runs php-cgi and php-fpm")
	}
	fpm, err := filepath.Glob("/usr/sbin/php-fpm*")
	if err != nil || len(fpm) == 0 {
		b.Skip("php-fpm not installed")
	}
	dir := testbed.PublicDir(b)
	ini := filepath.Join(dir, "php.ini")
	writeBenchFile(b, ini, "zend_extension=opcache\nopcache.enable=1\nopcache.memory_consumption=64\n"+
		"display_errors=0\nlog_errors=0\n")
	scripts := map[string]string{"hello": testdataScript(b, "hello.php"), "includes": includeHeavyApp(b, dir)}
	engines := []struct {
		name  string
		start func(b *testing.B, sock string) *exec.Cmd
	}{
		{"php-cgi-master", func(b *testing.B, sock string) *exec.Cmd {
			cmd := exec.Command(phpCGIPath, "-c", ini, "-b", sock)
			cmd.Env = append(os.Environ(), "PHP_INI_SCAN_DIR=", "PHP_FCGI_CHILDREN=4", "PHP_FCGI_MAX_REQUESTS=0")
			return cmd
		}},
		{"php-fpm-static", func(b *testing.B, sock string) *exec.Cmd {
			conf := filepath.Join(dir, "fpm.conf")
			writeBenchFile(b, conf, fmt.Sprintf("[global]\nerror_log = %s/fpm.log\ndaemonize = no\n"+
				"[www]\nuser = root\nlisten = %s\npm = static\npm.max_children = 4\npm.max_requests = 0\n", dir, sock))
			cmd := exec.Command(fpm[len(fpm)-1], "-F", "-R", "-y", conf, "-c", ini)
			cmd.Env = append(os.Environ(), "PHP_INI_SCAN_DIR=")
			return cmd
		}},
	}
	for _, page := range []string{"hello", "includes"} {
		for _, e := range engines {
			b.Run(page+"/"+e.name, func(b *testing.B) {
				sock := filepath.Join(dir, e.name+".sock")
				cmd := e.start(b, sock)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() {
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the whole tree
					_ = cmd.Wait()
					_ = os.Remove(sock)
				})
				conns := dialBenchConns(b, sock, 4)
				params := scriptParams(scripts[page], "GET", "")
				for _, c := range conns { // warm every child's view of the opcache
					benchRequest(b, c, params)
				}
				cpu0 := treeTicks(cmd.Process.Pid)
				start := time.Now()
				b.ResetTimer()
				var wg sync.WaitGroup
				for i, c := range conns {
					n := b.N / len(conns)
					if i == 0 {
						n += b.N % len(conns)
					}
					wg.Go(func() {
						for range n {
							benchRequest(b, c, params)
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				elapsed := time.Since(start)
				ticks := treeTicks(cmd.Process.Pid) - cpu0
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
				b.ReportMetric(float64(ticks)*1e6/clockTicks/float64(b.N), "php-cpu-µs/req")
			})
		}
	}
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's utime and stime.
const clockTicks = 100

func writeBenchFile(b testing.TB, path, content string) {
	b.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}

// includeHeavyApp writes a script that loads 200 class files and calls
// into them, a framework's bootstrap in miniature: with opcache, the
// cost is executing cached code, as on a WordPress page. ?ms=N holds the
// worker that long afterwards.
func includeHeavyApp(b testing.TB, dir string) string {
	b.Helper()
	var app strings.Builder
	app.WriteString("<?php\n")
	for i := range 200 {
		name := fmt.Sprintf("c%d.php", i)
		writeBenchFile(b, filepath.Join(dir, name), fmt.Sprintf(`<?php
class C%[1]d {
	public array $items = ['a' => 1, 'b' => 2, 'c' => 3];
	public function render(string $x): string { return '<li>' . htmlspecialchars($x . %[1]d) . '</li>'; }
	public function sum(): int { return array_sum($this->items) + %[1]d; }
}
`, i))
		fmt.Fprintf(&app, "require_once __DIR__ . '/%s';\n", name)
	}
	app.WriteString("$out = '';\nfor ($i = 0; $i < 200; $i++) { $c = 'C' . $i; $o = new $c(); $out .= $o->render('item') . $o->sum(); }\necho $out;\n" +
		"if (isset($_GET['ms'])) { usleep((int)$_GET['ms'] * 1000); }\n")
	path := filepath.Join(dir, "app.php")
	writeBenchFile(b, path, app.String())
	return path
}

// dialBenchConns connects n Conns to sock, waiting until it accepts (the
// file appears at bind, before listen).
func dialBenchConns(b *testing.B, sock string, n int) []*Conn {
	b.Helper()
	conns := make([]*Conn, 0, n)
	var err error
	testbed.Poll(10*time.Second, func() bool {
		var c *Conn
		if c, err = Dial(context.Background(), "unix", sock); err != nil {
			return false
		}
		b.Cleanup(func() { _ = c.Close() })
		conns = append(conns, c)
		return len(conns) == n
	})
	if len(conns) < n {
		b.Fatalf("%s: %v", sock, err)
	}
	return conns
}

func benchRequest(b *testing.B, c *Conn, params []Param) {
	if _, err := c.Do(context.Background(), params, nil, io.Discard, io.Discard); err != nil {
		b.Error(err)
	}
}

// treeTicks is the CPU time (utime + stime, in clock ticks) of pid and
// every descendant.
func treeTicks(pid int) int64 {
	var total int64
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			total += u + s
		}
	}
	for _, c := range testbed.Children(pid) {
		total += treeTicks(c.PID)
	}
	return total
}
