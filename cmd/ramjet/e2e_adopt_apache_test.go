package main_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// cpanelUsers are the host's customers: existing system accounts stand
// in for cPanel's, each with /home/USER/public_html (under a temporary
// root) and a php-fpm pool running as the user.
var cpanelUsers = []string{"daemon", "bin", "sys"}

// cpanelHost is Apache the way cPanel lays a shared host out: a
// name-based <VirtualHost> per account with its docroot under
// /home/USER/public_html, PHP through the account's own php-fpm pool,
// .htaccess allowed; the first account's site also serves TLS, its
// plain vhost redirecting there.
type cpanelHost struct {
	root, conf, errorLog string
	plain, tls, origin   string
	admin                string
	pki                  *pki
	files                map[string]string
}

func newCpanelHost(t *testing.T) *cpanelHost {
	t.Helper()
	if os.Geteuid() != 0 {
		testbed.Skip(t, "the cPanel layout runs PHP as several users: needs root")
	}
	ports := testbed.FreePorts(t, 4)
	h := &cpanelHost{root: testbed.PublicDir(t), pki: newPKI(t), files: map[string]string{},
		plain: fmt.Sprintf("127.0.0.1:%d", ports[0]), tls: fmt.Sprintf("127.0.0.1:%d", ports[1]),
		origin: fmt.Sprintf("127.0.0.1:%d", ports[2]), admin: fmt.Sprintf("127.0.0.1:%d", ports[3])}
	etc := filepath.Join(h.root, "etc", "apache2")
	h.conf, h.errorLog = filepath.Join(etc, "apache2.conf"), filepath.Join(h.root, "error.log")
	cert, key := h.pki.issue(t, "daemon.test", "daemon.test", "www.daemon.test")
	var vhosts strings.Builder
	for _, u := range cpanelUsers {
		fpm := testbed.StartPHPFPM(t, fmt.Sprintf("user = %s\ngroup = %s\n", u, u))
		docroot := h.home(t, u)
		h.write(t, filepath.Join(h.root, "etc", "php", "fpm", "pool.d", u+".conf"), fmt.Sprintf("[%s]\nuser = %s\ngroup = %s\nlisten = %s\n", u, u, u, fpm.Addr))
		site := fmt.Sprintf("\tServerName %[1]s.test\n\tServerAlias www.%[1]s.test\n\tDocumentRoot %[2]s\n\t<FilesMatch \"\\.php$\">\n\t\tSetHandler \"proxy:fcgi://%[3]s\"\n\t</FilesMatch>\n", u, docroot, fpm.Addr)
		if u != cpanelUsers[0] {
			fmt.Fprintf(&vhosts, "<VirtualHost *:%s>\n%s</VirtualHost>\n", port(h.plain), site)
			continue
		}
		fmt.Fprintf(&vhosts, "<VirtualHost *:%s>\n\tServerName %s.test\n\tServerAlias www.%s.test\n\tRedirect permanent / https://%s.test/\n</VirtualHost>\n", port(h.plain), u, u, u)
		fmt.Fprintf(&vhosts, "<VirtualHost *:%s>\n%s\tSSLEngine on\n\tSSLCertificateFile %s\n\tSSLCertificateKeyFile %s\n</VirtualHost>\n", port(h.tls), site, cert, key)
	}
	h.write(t, filepath.Join(etc, "sites-enabled", "accounts.conf"), vhosts.String())
	modules := ""
	for _, m := range []string{"mpm_event", "authz_core", "dir", "mime", "alias", "rewrite", "proxy", "proxy_fcgi", "ssl", "socache_shmcb", "setenvif"} {
		modules += fmt.Sprintf("LoadModule %[1]s_module /usr/lib/apache2/modules/mod_%[1]s.so\n", m)
	}
	h.write(t, h.conf, fmt.Sprintf(`ServerRoot %[1]s
PidFile %[2]s/apache2.pid
DefaultRuntimeDir %[2]s
ErrorLog %[3]s
LogLevel warn
%[4]sUser www-data
Group www-data
ServerName 127.0.0.1
TypesConfig /dev/null
AddType text/html .html
AddType text/plain .txt
StartServers 1
ServerLimit 2
ThreadsPerChild 16
MaxRequestWorkers 32
Listen %[5]s
<IfModule ssl_module>
	Listen %[6]s
</IfModule>
<Directory />
	AllowOverride None
	Require all denied
</Directory>
<Directory %[7]s/home>
	AllowOverride All
	Require all granted
</Directory>
IncludeOptional sites-enabled/*.conf
`, etc, h.root, h.errorLog, modules, h.plain, h.tls, h.root))
	testbed.StartApacheFiles(t, h.conf, h.plain, h.errorLog)
	return h
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// home makes /home/USER/public_html, owned by the user: a home page, a
// PHP page saying who runs it, and an .htaccess that Apache honours
// (the home page is home.html).
func (h *cpanelHost) home(t *testing.T, u string) string {
	t.Helper()
	d := filepath.Join(h.root, "home", u, "public_html")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"home.html":  "home of " + u + "\n",
		"whoami.php": "<?php echo 'php runs as ', posix_getpwuid(posix_geteuid())['name'], ', https ', $_SERVER['HTTPS'] ?? 'off', \"\\n\";",
		".htaccess":  "DirectoryIndex home.html\n",
	}
	uid := lookupUID(t, u)
	for f, body := range files {
		p := filepath.Join(d, f)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, -1); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{d, filepath.Dir(d)} {
		if err := os.Chown(p, uid, -1); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func lookupUID(t *testing.T, name string) int {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		t.Fatal(err)
	}
	return uid
}

func (h *cpanelHost) write(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	h.files[p] = text
}

func (h *cpanelHost) adopt(t *testing.T, args ...string) (int, string) {
	t.Helper()
	base := []string{"adopt", "apache", "--apache", testbed.ApacheBin, "--conf", h.conf, "--origin", h.origin, "--admin", h.admin,
		"--token-dir", filepath.Join(h.root, "tokens"), "--ramjet-group", "root",
		"--php-pools", filepath.Join(h.root, "etc", "php", "fpm", "pool.d", "*.conf"), "--backup", filepath.Join(h.root, "backup")}
	return testbed.RunRamjet(t, 3*time.Minute, append(base, args...)...)
}

func (h *cpanelHost) load() *adoptLoad {
	var ts []loadTarget
	for _, u := range cpanelUsers[1:] {
		ts = append(ts, loadTarget{"http://" + u + ".test/", "home of " + u + "\n"},
			loadTarget{"http://www." + u + ".test/whoami.php", "php runs as " + u + ", https off\n"})
	}
	// PHP of the TLS site keeps seeing HTTPS=on once ramjet takes TLS.
	u := cpanelUsers[0]
	ts = append(ts, loadTarget{"https://" + u + ".test/", "home of " + u + "\n"}, loadTarget{"https://" + u + ".test/whoami.php", "php runs as " + u + ", https on\n"})
	return startAdoptLoad(h.plain, h.tls, h.pki.ca.Pool(), ts, 6)
}

func TestAdoptApacheCpanelLayoutUnderLoadWithTokensPerAccountAndRollback(t *testing.T) {
	h := newCpanelHost(t)
	out := filepath.Join(h.root, "ramjet.yaml")
	load := h.load()
	time.Sleep(300 * time.Millisecond) // load on Apache alone first
	code, output := h.adopt(t, "--out", out, "--apply")
	if code != 0 {
		load.end()
		t.Fatalf("adopt apache --apply exited %d:\n%s", code, output)
	}
	time.Sleep(300 * time.Millisecond)
	load.check(t, "switch")
	pid := adoptedRamjet(t, filepath.Join(h.root, "backup"))

	c := readAdopted(t, out)
	if c.Listen != h.plain || c.TLS.Listen != h.tls || len(c.Hosts) != len(cpanelUsers) || len(c.TLS.Hosts) != 1 {
		t.Fatalf("listen %q, tls %+v, hosts %+v", c.Listen, c.TLS, c.Hosts)
	}
	for i, host := range c.Hosts {
		u := cpanelUsers[i]
		docroot := filepath.Join(h.root, "home", u, "public_html")
		if strings.Join(host.Names, " ") != u+".test www."+u+".test" || host.HtaccessRoot != docroot || host.HTTPSRedirect != (i == 0) {
			t.Errorf("%s's host: %+v", u, host)
		}
		st, err := os.Stat(host.AdminTokenFile)
		if err != nil {
			t.Fatal(err)
		}
		// Readable by the account's user (its WordPress) and ramjet's
		// group, by no other account.
		if sys := st.Sys().(*syscall.Stat_t); int(sys.Uid) != lookupUID(t, u) || sys.Gid != 0 || st.Mode().Perm() != 0o640 {
			t.Errorf("%s: uid %d gid %d mode %v, want %s's, ramjet's group, 0640", host.AdminTokenFile, sys.Uid, sys.Gid, st.Mode().Perm(), u)
		}
	}
	cl := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r := get(t, cl, "http://"+h.plain+"/", "Host: bin.test")
	if r.Status != 200 || r.Header.Get("Cache-Status") == "" || string(r.Body) != "home of bin\n" {
		t.Fatalf("bin.test through ramjet (.htaccess DirectoryIndex): %d %v %q", r.Status, r.Header, r.Body)
	}
	if r = get(t, cl, "http://"+h.plain+"/x", "Host: daemon.test"); r.Status != 301 || r.Header.Get("Location") != "https://daemon.test:"+port(h.tls)+"/x" {
		t.Fatalf("http://daemon.test/x through ramjet: %d %v", r.Status, r.Header)
	}
	if code, out := testbed.RunRamjet(t, time.Minute, "check", "--config", out); code != 0 {
		t.Fatalf("ramjet check refuses what adopt wrote: %s", out)
	}

	load = h.load()
	time.Sleep(300 * time.Millisecond)
	code, output = testbed.RunRamjet(t, 3*time.Minute, "adopt", "--rollback", "--backup", filepath.Join(h.root, "backup"))
	if code != 0 {
		load.end()
		t.Fatalf("adopt --rollback exited %d:\n%s", code, output)
	}
	time.Sleep(300 * time.Millisecond)
	load.check(t, "rollback")
	for p, want := range h.files {
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%s after the rollback (err %v):\n%s", p, err, got)
		}
	}
	if alive(pid) {
		t.Fatalf("ramjet (pid %d) still runs after the rollback", pid)
	}
	if r = get(t, cl, "http://"+h.plain+"/", "Host: bin.test"); r.Status != 200 || r.Header.Get("Cache-Status") != "" {
		t.Fatalf("after --rollback Apache answers its old port: %d %v", r.Status, r.Header)
	}
}

func TestAdoptApacheRefusesBadInputAndChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, h *cpanelHost) string // breaks the host's files; returns what the error must say
	}{
		{"a config apache2 -t refuses", func(t *testing.T, h *cpanelHost) string {
			f := filepath.Join(h.root, "etc", "apache2", "sites-enabled", "zz.conf")
			h.write(t, f, "<VirtualHost *:"+port(h.plain)+">\n\tServerName zz.test\n\tNoSuchDirective on\n</VirtualHost>\n")
			return "Syntax error on line 3 of " + f
		}},
		{"a certificate that does not load", func(t *testing.T, h *cpanelHost) string {
			h.write(t, filepath.Join(h.pki.dir, "daemon.test.crt"), "-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n")
			return filepath.Join(h.root, "etc", "apache2", "sites-enabled", "accounts.conf") + ":6: the certificate " + filepath.Join(h.pki.dir, "daemon.test.crt")
		}},
		{"a duplicate ServerAlias", func(t *testing.T, h *cpanelHost) string {
			f := filepath.Join(h.root, "etc", "apache2", "sites-enabled", "zz.conf")
			h.write(t, f, "<VirtualHost *:"+port(h.plain)+">\n\tServerName zz.test\n\tServerAlias www.bin.test\n</VirtualHost>\n")
			return f + `:1: ServerName/ServerAlias "www.bin.test" on ` + h.plain + " is already declared at " + filepath.Join(h.root, "etc", "apache2", "sites-enabled", "accounts.conf") + ":"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newCpanelHost(t)
			want := tc.break_(t, h)
			out := filepath.Join(h.root, "ramjet.yaml")
			code, output := h.adopt(t, "--out", out, "--apply")
			if code != 1 || !strings.Contains(output, want) {
				t.Fatalf("adopt apache --apply exited %d, want 1 saying %q:\n%s", code, want, output)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("ramjet's configuration was written")
			}
			for p, want := range h.files {
				if got, err := os.ReadFile(p); err != nil || string(got) != want {
					t.Errorf("%s changed (err %v)", p, err)
				}
			}
			cl := &http.Client{Timeout: 10 * time.Second}
			if r := get(t, cl, "http://"+h.plain+"/", "Host: bin.test"); r.Status != 200 || r.Header.Get("Cache-Status") != "" {
				t.Errorf("Apache on its address: %d %v", r.Status, r.Header)
			}
			if c, err := net.DialTimeout("tcp", h.origin, time.Second); err == nil {
				c.Close()
				t.Errorf("something listens on the origin address")
			}
		})
	}
}
