package wordpress_test

// The WordPress stack for bench/run's "wordpress" group (BENCH_ONLY=wordpress):
// the same setup as the end-to-end test (private MariaDB, a private copy of
// Debian's WordPress with its own wp-config.php, wp_install() from PHP CLI,
// the ramjet-cache plugin, nginx + php-fpm with pm static and 4 children),
// plus two ramjets: one caching in front of that nginx, one serving the
// docroot itself with its php-cgi pool. It measures nothing: it prints
// "WPBENCH key=value" lines with the URLs and process ids, then "WPBENCH
// ready=1", and holds the stack up until SIGTERM/SIGINT, until its parent
// exits, or until RAMJET_WP_BENCH_HOLD (default 30m) passes; then the usual
// cleanups stop everything. bench/run runs the load against it.
//
// Skipped unless RAMJET_WP_BENCH=1, so `go test ./...` passes through fast.
// By hand:
//
//	RAMJET_WP_BENCH=1 go test -run TestWordPressBench -v ./plugins/wordpress/e2e/
//
// Environment: RAMJET_WP_BENCH_RAMJET (a ramjet binary to use instead of
// the one TestMain built), RAMJET_WP_BENCH_PHP_CGI (php-cgi for docroot
// mode; default php-cgi on PATH), RAMJET_WP_BENCH_WORKERS (PHP workers of
// the docroot ramjet, default 4 like the php-fpm pool), RAMJET_WP_BENCH_HOLD.

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// benchPosts is how many extra posts the bench site gets beside the four
// of setup.php, so the home page lists a realistic page of posts.
const benchPosts = 6

func TestWordPressBench(t *testing.T) {
	if os.Getenv("RAMJET_WP_BENCH") != "1" {
		t.Skip("the WordPress bench stack runs only with RAMJET_WP_BENCH=1 (bench/run: BENCH_ONLY=wordpress)")
	}
	var miss []string
	for _, m := range missing {
		if !strings.HasPrefix(m, "redis-server") { // the bench needs no Redis
			miss = append(miss, m)
		}
	}
	phpCGI := os.Getenv("RAMJET_WP_BENCH_PHP_CGI")
	if phpCGI == "" {
		if p, err := exec.LookPath("php-cgi"); err == nil {
			phpCGI = p
		} else {
			miss = append(miss, "php-cgi")
		}
	}
	if len(miss) > 0 {
		benchLine("skip", fmt.Sprintf("missing Debian packages %v", miss))
		t.Skipf("missing Debian packages %v (apt-get install --no-install-recommends wordpress mariadb-server php-mysql php-cli php-fpm php-cgi nginx-light)", miss)
	}
	if os.Geteuid() != 0 {
		benchLine("skip", "not root (the origin runs nginx and php-fpm as root)")
		t.Skip("the origin runs nginx and php-fpm as root")
	}
	bin := os.Getenv("RAMJET_WP_BENCH_RAMJET")
	if bin == "" {
		bin = testbed.Binary(t)
	}
	workers := 4
	if s := os.Getenv("RAMJET_WP_BENCH_WORKERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("RAMJET_WP_BENCH_WORKERS=%q: want a positive integer", s)
		}
		workers = n
	}
	hold := 30 * time.Minute
	if s := os.Getenv("RAMJET_WP_BENCH_HOLD"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("RAMJET_WP_BENCH_HOLD=%q: want a positive duration", s)
		}
		hold = d
	}

	start := time.Now()
	db := testbed.StartMariaDB(t)
	proxy, doc := testbed.NewRamjet(t), testbed.NewRamjet(t)
	wp := installWordPress(t, db, proxy.AdminURL)
	runPHP(t, nil, "testdata/bench-posts.php", wp.docroot, strconv.Itoa(benchPosts))
	ini := benchINI(t)
	origin := startOriginWith(t, wp.docroot, "", ini)

	cfgDir := t.TempDir()
	proxyCfg := filepath.Join(cfgDir, "ramjet-proxy.yaml")
	writeFile(t, proxyCfg, fmt.Sprintf(`admin:
  token: %q
origin:
  servers: [%q]
`, adminToken, origin))
	docCfg := filepath.Join(cfgDir, "ramjet-docroot.yaml")
	writeFile(t, docCfg, fmt.Sprintf(`admin:
  token: %q
defaults:
  docroot:
    root: %q
    serve: all
    php:
      binary: %q
      ini_file: %q
      workers: %d
      min_workers: %d
      idle_suspend: 0s
      idle_exit: 0s
`, adminToken, wp.docroot, phpCGI, ini, workers, workers))
	startBenchRamjet(t, proxy, bin, proxyCfg)
	startBenchRamjet(t, doc, bin, docCfg)

	benchLine("host", siteHost)
	benchLine("origin", origin)
	benchLine("proxy", proxy.URL)
	benchLine("proxy_admin", proxy.AdminURL)
	benchLine("docroot", doc.URL)
	benchLine("docroot_admin", doc.AdminURL)
	benchLine("admin_token", adminToken)
	benchLine("home", "/")
	benchLine("post", "/post-b/")
	benchLine("post_title", "Post B original")
	benchLine("posts", strconv.Itoa(4+benchPosts))
	benchLine("php_cgi", phpCGI)
	benchLine("php_workers", strconv.Itoa(workers))
	benchLine("php_ini", ini)
	benchLine("pid_proxy", strconv.Itoa(proxy.Pid()))
	benchLine("pid_docroot", strconv.Itoa(doc.Pid()))
	for _, c := range testbed.Children(os.Getpid()) {
		if c.Comm != "ramjet" { // reported apart above, as both are named ramjet
			benchLine("pid_"+strings.ReplaceAll(c.Comm, " ", "_"), strconv.Itoa(c.PID))
		}
	}
	benchLine("setup_seconds", fmt.Sprintf("%.1f", time.Since(start).Seconds()))
	benchLine("ready", "1")

	// Hold until told to stop; the cleanups registered above then stop
	// every process and remove the temporary directories.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	parent := os.Getppid()
	deadline := time.After(hold)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case s := <-sig:
			t.Logf("%v: stopping the stack", s)
			return
		case <-deadline:
			t.Logf("held for %v (RAMJET_WP_BENCH_HOLD): stopping the stack", hold)
			return
		case <-tick.C:
			if os.Getppid() != parent {
				t.Log("parent exited: stopping the stack")
				return
			}
		}
	}
}

// benchINI writes the one php.ini both PHP servers of the bench read
// (php-fpm -c, the docroot's php.ini_file): Debian's php-fpm php.ini with
// the settings the end-to-end origin gives its pool (memory_limit 256M,
// display_errors off), so that php-fpm and php-cgi run WordPress with
// identical settings. It is world-readable: php-cgi runs as www-data.
func benchINI(t *testing.T) string {
	t.Helper()
	src, err := filepath.Glob("/etc/php/*/fpm/php.ini")
	if err != nil || len(src) == 0 {
		t.Fatalf("no /etc/php/*/fpm/php.ini (%v): install php-fpm", err)
	}
	base, err := os.ReadFile(src[len(src)-1])
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testbed.PublicDir(t), "php.ini")
	// Later lines win in a php.ini.
	body := append(base, "\n; the bench's own, for php-fpm and php-cgi alike\nmemory_limit = 256M\ndisplay_errors = Off\n"...)
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// benchLine prints one machine-readable line for bench/run.
func benchLine(key, value string) {
	fmt.Printf("WPBENCH %s=%s\n", key, value)
}

// startBenchRamjet runs `ramjet serve --config cfg` (bin) on rj's ports
// with GOMAXPROCS=1 (the bench pins servers to one core) until /healthz
// answers.
func startBenchRamjet(t *testing.T, rj *testbed.Ramjet, bin, cfg string) {
	t.Helper()
	rj.Binary, rj.Env = bin, []string{"GOMAXPROCS=1"}
	rj.Start(t, "--config", cfg)
}
