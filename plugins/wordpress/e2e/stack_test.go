// Package wordpress_test runs a real WordPress (Debian's package) with the
// ramjet-cache plugin behind real ramjet nodes and checks, as a browser
// would, that pages are cached, purged exactly and never leak between
// users. internal/testbed starts the processes (MariaDB on a private
// socket, nginx or Apache + php-fpm on ephemeral loopback ports serving a private
// copy of /usr/share/wordpress, redis-server, the ramjet binary built from
// this repository); this file says how this site is set up on them.
// Nothing outside temporary directories is touched.
package wordpress_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

const (
	phpTimeout = 60 * time.Second // one PHP CLI run (install, edit)

	siteHost = "wp.test" // WordPress's home host; every request carries it
	// adminToken is what the plugin purges with: wp.test's site token
	// (hosts[].admin_token), which purges that site only.
	adminToken = "e2e-secret-token"
	// operatorToken is the operator's (admin.token): every site.
	operatorToken = "e2e-operator-token"
	// neighbourHost is another site on the same ramjet; WordPress's
	// purges must never reach its pages.
	neighbourHost = "neighbour.test"
)

// missing lists the Debian packages not installed; set once by TestMain.
var missing []string

func TestMain(m *testing.M) {
	for _, need := range []struct{ path, pkg string }{
		{"/usr/share/wordpress/wp-load.php", "wordpress"},
		{"/usr/sbin/mariadbd", "mariadb-server"},
		{"/usr/bin/mariadb-install-db", "mariadb-server"},
		{"/usr/bin/php", "php-cli"},
		{"/usr/sbin/nginx", "nginx-light"},
		{"/usr/sbin/apache2", "apache2-bin"},
		{"/usr/bin/redis-server", "redis-server"},
	} {
		if _, err := os.Stat(need.path); err != nil {
			missing = append(missing, need.pkg)
		}
	}
	if out, err := exec.Command("php", "-r", "exit(function_exists('mysqli_connect') ? 0 : 1);").CombinedOutput(); err != nil {
		missing = append(missing, fmt.Sprintf("php-mysql (%v %s)", err, out))
	}
	os.Exit(testbed.Main(m))
}

// requireStack fails, never skips, when Debian packages are missing
// (.ci/deps installs them) or ramjet does not build.
func requireStack(t *testing.T) {
	t.Helper()
	if len(missing) > 0 {
		t.Fatalf("missing Debian packages %v (install: apt-get install --no-install-recommends wordpress mariadb-server php-mysql php-cli php-fpm nginx-light apache2-bin redis-server, or run .ci/deps)", missing)
	}
	testbed.Binary(t)
}

// runPHP runs a PHP CLI script with a time limit and returns its stdout.
func runPHP(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("php", append([]string{"-d", "display_errors=stderr", "-d", "error_reporting=E_ALL & ~E_DEPRECATED"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := testbed.RunCmd(cmd, phpTimeout)
	if err != nil {
		t.Fatalf("php %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr)
	}
	if stderr != "" {
		t.Logf("php %s stderr:\n%s", args[0], stderr)
	}
	return stdout.String()
}

// ---------------------------------------------------------------------------
// WordPress

// site is an installed WordPress.
type site struct {
	docroot string         // the WordPress tree
	origin  string         // nginx's http://127.0.0.1:port, once started
	ids     map[string]int // created objects, from setup.php
}

// installWordPress puts WordPress with the plugin and the test theme in
// place on db, with the plugin talking to the admin API at adminURL, then
// installs it and creates its content from PHP CLI (setup.php).
func installWordPress(t *testing.T, db *testbed.MariaDB, adminURL string) *site {
	t.Helper()
	wp := testbed.InstallWordPress(t, testbed.WordPressConfig{
		DB: db,
		Content: map[string]string{
			"plugins/ramjet-cache": "../ramjet-cache",
			"themes/ramjet-e2e":    "testdata/ramjet-e2e-theme",
		},
		Defines: map[string]string{"RAMJET_ADMIN_URL": adminURL, "RAMJET_ADMIN_TOKEN": adminToken},
	})
	out := runPHP(t, nil, "testdata/setup.php", wp.Docroot)
	s := &site{docroot: wp.Docroot, ids: map[string]int{}}
	if err := json.Unmarshal([]byte(lastLine(out)), &s.ids); err != nil {
		t.Fatalf("setup.php output %q: %v", out, err)
	}
	return s
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// startOrigin runs php-fpm and nginx for docroot and returns nginx's URL
// once WordPress answers.
func startOrigin(t *testing.T, docroot string) string {
	t.Helper()
	return startOriginWith(t, docroot, "php_admin_flag[display_errors] = off\nphp_admin_value[memory_limit] = 256M\n", "")
}

// startOriginWith is startOrigin with pool lines for php-fpm's pool and
// a php.ini of its own (php-fpm -c; "" keeps php-fpm's).
func startOriginWith(t *testing.T, docroot, pool, iniFile string) string {
	t.Helper()
	return startWordPressNginx(t, docroot, testbed.StartPHPFPMWithINI(t, pool, iniFile).Addr, "")
}

// startWordPressNginx serves docroot's WordPress with nginx and the
// php-fpm at fpmAddr, its permalinks through index.php; httpBlock adds
// lines to nginx's http block. It returns nginx's URL once WordPress
// answers.
//
// The pool is named twice in an upstream, so that nginx asks php-fpm
// again (fastcgi_next_upstream's default: error, timeout; GET and HEAD
// only) when a child dies before its answer. Debian's PHP 8.2 has such a
// crash: mbstring's request shutdown releases a string that is already
// freed (SIGSEGV in zend_deactivate_modules, in about one request of a
// few hundred of these tests; php-src's later mbstring use-after-free
// fixes were not backported to 8.2, which only gets security fixes). A
// small page's answer is lost with the child, and a test saw nginx's 502
// for a GET /wp-login.php that had nothing to do with ramjet.
func startWordPressNginx(t *testing.T, docroot, fpmAddr, httpBlock string) string {
	t.Helper()
	upstream := fmt.Sprintf("upstream wp_php {\n\tserver %[1]s max_fails=0;\n\tserver %[1]s max_fails=0;\n}\n", fpmAddr)
	nginx := testbed.StartNginx(t, testbed.NginxConfig{HTTP: upstream + httpBlock, Server: fmt.Sprintf(`		access_log off;
		root %s;
		index index.php;
		location / { try_files $uri $uri/ /index.php?$args; }
		location ~ \.php$ {
			try_files $uri =404;
			fastcgi_pass wp_php;
			fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
			include /etc/nginx/fastcgi_params;
			fastcgi_read_timeout 60s;
		}
`, docroot)})
	waitWordPress(t, nginx.URL)
	return nginx.URL
}

// startApacheOrigin runs php-fpm and Apache for docroot, configured as
// README's Apache steps say (testbed.ApacheOrigin includes
// conf/apache-origin.conf), and returns Apache's URL once WordPress
// answers. The docroot gets the .htaccess that WordPress's Settings →
// Permalinks writes under Apache with mod_rewrite (setup.php runs from the
// CLI, where WordPress writes none).
func startApacheOrigin(t *testing.T, docroot string) string {
	t.Helper()
	writeFile(t, docroot+"/.htaccess", wpHtaccess)
	fpm := testbed.StartPHPFPM(t, "php_admin_flag[display_errors] = off\nphp_admin_value[memory_limit] = 256M\n")
	apache := testbed.StartApache(t, testbed.ApacheOrigin(t, fpm.Addr, fmt.Sprintf(`	DocumentRoot %[1]s
	DirectoryIndex index.php index.html
	<Directory %[1]s>
		AllowOverride All
		Require all granted
	</Directory>
`, docroot)))
	waitWordPress(t, apache.URL)
	return apache.URL
}

// wpHtaccess is WordPress's rewrite block for a site at the root.
const wpHtaccess = `# BEGIN WordPress
<IfModule mod_rewrite.c>
RewriteEngine On
RewriteRule .* - [E=HTTP_AUTHORIZATION:%{HTTP:Authorization}]
RewriteBase /
RewriteRule ^index\.php$ - [L]
RewriteCond %{REQUEST_FILENAME} !-f
RewriteCond %{REQUEST_FILENAME} !-d
RewriteRule . /index.php [L]
</IfModule>
# END WordPress
`

// waitWordPress waits until GET / on origin answers 200.
func waitWordPress(t *testing.T, origin string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer c.CloseIdleConnections()
	last := ""
	ok := testbed.Poll(20*time.Second, func() bool {
		req, _ := http.NewRequest("GET", origin+"/", nil) // constant URL
		req.Host = siteHost
		resp, err := c.Do(req)
		if err != nil {
			last = err.Error()
			return false
		}
		resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK
	})
	if !ok {
		t.Fatalf("WordPress at %s not answering GET / with 200 within 20 s: %s", origin, last)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ---------------------------------------------------------------------------
// ramjet

// node is one ramjet of the cluster, its ports chosen before it starts so
// WordPress's config can name its admin URL.
type node struct {
	name string
	*testbed.Ramjet
}

func reserveNode(t *testing.T, name string) *node {
	return &node{name: name, Ramjet: testbed.NewRamjet(t)}
}

// start runs the node with a config file in front of origin (or with
// extra flags such as --docroot, which the file's hosts get too), with
// Redis fan-out, until /healthz answers.
func (n *node) start(t *testing.T, origin, redisURL string, extra ...string) {
	t.Helper()
	originYAML := ""
	if origin != "" {
		originYAML = fmt.Sprintf("origin:\n  servers: [%q]\n", origin)
	}
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`admin:
  token: %q
%spurge:
  redis: %q
  node: %q
defaults:
  grace: 0s
  debug_headers: true
hosts:
  - names: [%q]
    admin_token: %q
%s  - names: [%q]
    default_ttl: 5m
%s`, operatorToken, originYAML, redisURL, n.name, siteHost, adminToken, hostDocroot(extra, 0), neighbourHost, hostDocroot(extra, 5*time.Minute)))
	n.Start(t, append([]string{"--config", cfg}, extra...)...)
}

// hostDocroot is the docroot block a hosts[] entry needs to serve what
// the --docroot flag among extra serves (the flag sets the defaults, not
// the file's hosts), with static files kept for staticTTL.
func hostDocroot(extra []string, staticTTL time.Duration) string {
	root := ""
	for i, a := range extra {
		if a == "--docroot" && i+1 < len(extra) {
			root = extra[i+1]
		}
	}
	if root == "" {
		return ""
	}
	return fmt.Sprintf(`    docroot:
      root: %q
      serve: all
      front_controller: /index.php
      static_ttl: %s
      php:
        workers: 2
`, root, staticTTL)
}
