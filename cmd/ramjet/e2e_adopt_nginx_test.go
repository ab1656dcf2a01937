package main_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// adoptHost is an nginx host the way a shared host has one, in a
// temporary directory: nginx.conf including sites-enabled/*.conf, 20
// virtual hosts (a default server, plain sites with www aliases, TLS
// sites whose plain blocks redirect to https, a site that only
// redirects elsewhere, a ".wild.test" site), and each site's docroot.
type adoptHost struct {
	dir, conf, errorLog string
	plain, tls, origin  string // nginx's public addresses, and where adopt moves it
	admin               string
	pki                 *pki
	files               map[string]string // every config file as written
	originTaken         bool              // by the test: untouched does not look there
}

const (
	adoptPlainSites = 12 // s01.test … s12.test (and www.)
	adoptTLSSites   = 5  // t01.test … t05.test, each with a plain redirect block
)

func newAdoptHost(t *testing.T, extraServer string) *adoptHost {
	t.Helper()
	ports := testbed.FreePorts(t, 4)
	h := &adoptHost{dir: t.TempDir(), pki: newPKI(t), files: map[string]string{},
		plain: fmt.Sprintf("127.0.0.1:%d", ports[0]), tls: fmt.Sprintf("127.0.0.1:%d", ports[1]),
		origin: fmt.Sprintf("127.0.0.1:%d", ports[2]), admin: fmt.Sprintf("127.0.0.1:%d", ports[3])}
	h.conf = filepath.Join(h.dir, "nginx.conf")
	h.errorLog = filepath.Join(h.dir, "error.log")
	user := ""
	if os.Geteuid() == 0 {
		user = "user root root;\n"
	}
	h.write(t, "nginx.conf", fmt.Sprintf(`%[1]spid %[2]s/nginx.pid;
error_log %[3]s warn;
worker_processes 2;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path %[2]s/tmp;
	proxy_temp_path %[2]s/tmp;
	fastcgi_temp_path %[2]s/tmp;
	uwsgi_temp_path %[2]s/tmp;
	scgi_temp_path %[2]s/tmp;
	default_type text/plain;
	log_not_found off;
	include sites-enabled/*.conf;
}
`, user, h.dir, h.errorLog))
	h.site(t, "00-default", "default", fmt.Sprintf("server {\n\tlisten %s default_server;\n\tserver_name _;\n\troot %s;\n}\n", h.plain, h.docroot(t, "default")))
	for i := 1; i <= adoptPlainSites; i++ {
		n := fmt.Sprintf("s%02d.test", i)
		h.site(t, n, n, fmt.Sprintf("server {\n\tlisten %s;\n\tserver_name %s www.%s;\n\troot %s;\n}\n", h.plain, n, n, h.docroot(t, n)))
	}
	// PHP says whether it was asked over https, as nginx's fastcgi_params
	// tell it.
	fpm := testbed.StartPHPFPM(t, "")
	h.write(t, "fastcgi_params", "fastcgi_param REQUEST_METHOD $request_method;\nfastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n"+
		"fastcgi_param SCRIPT_NAME $fastcgi_script_name;\nfastcgi_param REQUEST_URI $request_uri;\nfastcgi_param QUERY_STRING $query_string;\n"+
		"fastcgi_param SERVER_PROTOCOL $server_protocol;\nfastcgi_param REMOTE_ADDR $remote_addr;\nfastcgi_param SERVER_NAME $server_name;\n"+
		"fastcgi_param HTTPS $https if_not_empty;\n")
	php := fmt.Sprintf("\tlocation ~ \\.php$ {\n\t\tinclude fastcgi_params;\n\t\tfastcgi_pass %s;\n\t}\n", fpm.Addr)
	// A TLS site's home page is PHP saying whether it was asked over
	// https (as WordPress redirects when not): the shadow check must ask
	// it over TLS too.
	for i := 1; i <= adoptTLSSites; i++ {
		n := fmt.Sprintf("t%02d.test", i)
		cert, key := h.pki.issue(t, n, n, "www."+n)
		docroot := h.docroot(t, n)
		if err := os.WriteFile(filepath.Join(docroot, "home.php"), []byte("<?php echo 'home of "+n+"', ($_SERVER['HTTPS'] ?? '') === 'on' ? ' over https' : '', \"\\n\";"), 0o644); err != nil {
			t.Fatal(err)
		}
		h.site(t, n, n, fmt.Sprintf("server {\n\tlisten %[1]s;\n\tserver_name %[3]s www.%[3]s;\n\treturn 301 https://$host$request_uri;\n}\n"+
			"server {\n\tlisten %[2]s ssl;\n\tserver_name %[3]s www.%[3]s;\n\tssl_certificate %[4]s;\n\tssl_certificate_key %[5]s;\n\troot %[6]s;\n\tindex home.php;\n%[7]s}\n",
			h.plain, h.tls, n, cert, key, docroot, php))
	}
	h.site(t, "old.test", "old.test", fmt.Sprintf("server {\n\tlisten %s;\n\tserver_name old.test;\n\treturn 301 https://new.test$request_uri;\n}\n", h.plain))
	h.site(t, "wild.test", "wild.test", fmt.Sprintf("server {\n\tlisten %s;\n\tserver_name .wild.test;\n\troot %s;\n%s}\n", h.plain, h.docroot(t, "wild.test"), extraServer))
	return h
}

// docroot makes a site's document root with an index page and a
// robots.txt naming the site.
func (h *adoptHost) docroot(t *testing.T, name string) string {
	t.Helper()
	d := filepath.Join(h.dir, "www", name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, body := range map[string]string{"index.html": "home of " + name + "\n", "robots.txt": "robots of " + name + "\n",
		"https.php": "<?php echo 'https ', $_SERVER['HTTPS'] ?? 'off', \"\\n\";"} {
		if err := os.WriteFile(filepath.Join(d, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func (h *adoptHost) site(t *testing.T, file, _ string, text string) {
	h.write(t, "sites-enabled/"+file+".conf", text)
}

func (h *adoptHost) write(t *testing.T, rel, text string) {
	t.Helper()
	p := filepath.Join(h.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	h.files[p] = text
}

// start runs nginx on the host's configuration.
func (h *adoptHost) start(t *testing.T) *testbed.NginxFiles {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(h.dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	return testbed.StartNginxFiles(t, h.conf, h.plain, h.errorLog)
}

// adopt runs `ramjet adopt nginx` on the host with args.
func (h *adoptHost) adopt(t *testing.T, args ...string) (int, string) {
	t.Helper()
	base := []string{"adopt", "nginx", "--conf", h.conf, "--origin", h.origin, "--admin", h.admin,
		"--token-dir", filepath.Join(h.dir, "tokens"), "--ramjet-group", "root",
		"--php-pools", filepath.Join(h.dir, "pools", "*.conf"), "--backup", filepath.Join(h.dir, "backup")}
	return testbed.RunRamjet(t, 3*time.Minute, append(base, args...)...)
}

// unchanged fails the test unless every configuration file is as
// written.
func (h *adoptHost) unchanged(t *testing.T) {
	t.Helper()
	for p, want := range h.files {
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("%s changed (err %v):\n%s", p, err, got)
		}
	}
}

// adoptedConf is the part of ramjet's configuration the tests read.
type adoptedConf struct {
	Listen string
	Admin  struct{ Listen, Token string }
	Origin struct{ Servers []string }
	TLS    struct {
		Listen, Cert, Key string
		Hosts             []struct {
			Names     []string
			Cert, Key string
		}
	}
	Hosts []struct {
		Names          []string
		AdminTokenFile string `yaml:"admin_token_file"`
		HTTPSRedirect  bool   `yaml:"https_redirect"`
		HtaccessRoot   string `yaml:"htaccess_root"`
		Cache          *bool
	}
}

func readAdopted(t *testing.T, file string) adoptedConf {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var c adoptedConf
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, b)
	}
	return c
}

func TestAdoptNginxWritesAHostPerSiteWithItsNamesCertificatesAndToken(t *testing.T) {
	h := newAdoptHost(t, "\tlisten unix:"+"/run/never-adopted.sock;\n")
	h.start(t)
	out := filepath.Join(h.dir, "ramjet.yaml")
	code, output := h.adopt(t, "--out", out)
	if code != 0 {
		t.Fatalf("adopt exited %d:\n%s", code, output)
	}
	h.unchanged(t)
	c := readAdopted(t, out)
	if c.Listen != h.plain || c.TLS.Listen != h.tls || c.Origin.Servers[0] != "http://"+h.origin || c.Admin.Token == "" {
		t.Fatalf("listen %q tls %q origin %v admin token %q", c.Listen, c.TLS.Listen, c.Origin.Servers, c.Admin.Token)
	}
	byName := map[string]int{}
	for i, host := range c.Hosts {
		byName[host.Names[0]] = i
	}
	// 12 plain sites, 5 TLS sites (their redirect blocks merged in), the
	// one redirecting elsewhere and the wildcard one; the default server
	// has no name: ramjet's defaults reach it.
	if want := adoptPlainSites + adoptTLSSites + 2; len(c.Hosts) != want {
		t.Fatalf("%d hosts, want %d: %v", len(c.Hosts), want, byName)
	}
	s01 := c.Hosts[byName["s01.test"]]
	if strings.Join(s01.Names, " ") != "s01.test www.s01.test" || s01.HTTPSRedirect {
		t.Errorf("s01.test: %+v", s01)
	}
	t01 := c.Hosts[byName["t01.test"]]
	if strings.Join(t01.Names, " ") != "t01.test www.t01.test" || !t01.HTTPSRedirect {
		t.Errorf("t01.test: %+v", t01)
	}
	if w := c.Hosts[byName["wild.test"]]; strings.Join(w.Names, " ") != "wild.test *.wild.test" {
		t.Errorf("wild.test: %+v", w)
	}
	if len(c.TLS.Hosts) != adoptTLSSites || c.TLS.Hosts[0].Cert != filepath.Join(h.pki.dir, "t01.test.crt") || c.TLS.Cert == "" {
		t.Errorf("tls: %+v", c.TLS)
	}
	for _, host := range c.Hosts {
		st, err := os.Stat(host.AdminTokenFile)
		if err != nil {
			t.Fatal(err)
		}
		tok, _ := os.ReadFile(host.AdminTokenFile)
		if st.Mode().Perm() != 0o640 || len(strings.TrimSpace(string(tok))) != 64 {
			t.Errorf("%s: mode %v, token %q", host.AdminTokenFile, st.Mode().Perm(), tok)
		}
	}
	if want := filepath.Join(h.dir, "sites-enabled", "wild.test.conf") + ":5: listen on a unix socket"; !strings.Contains(output, "not mapped: "+want) {
		t.Errorf("output does not list %q:\n%s", want, output)
	}
	if code, out := testbed.RunRamjet(t, time.Minute, "check", "--config", out); code != 0 {
		t.Fatalf("ramjet check refuses what adopt wrote: %s", out)
	}
	// Adopting again hands out no new tokens.
	tok, _ := os.ReadFile(s01.AdminTokenFile)
	if code, output := h.adopt(t, "--out", out); code != 0 {
		t.Fatalf("adopt again exited %d:\n%s", code, output)
	}
	if again, _ := os.ReadFile(s01.AdminTokenFile); string(again) != string(tok) {
		t.Errorf("adopting again changed s01's token")
	}
}

func TestAdoptNginxDryRunShowsTheMoveAsADiffAndChangesNothing(t *testing.T) {
	h := newAdoptHost(t, "")
	h.start(t)
	code, out := h.adopt(t, "--dry-run")
	if code != 0 {
		t.Fatalf("adopt --dry-run exited %d:\n%s", code, out)
	}
	h.unchanged(t)
	for _, want := range []string{
		"--- " + filepath.Join(h.dir, "sites-enabled", "s01.test.conf"),
		"-\tlisten " + h.plain + ";",
		"+\tlisten " + h.origin + ";",
		"+# \tlisten " + h.plain + ";",
		"+\tset_real_ip_from 127.0.0.1; set_real_ip_from ::1; real_ip_header X-Forwarded-For;",
		"+# server {", // t01's redirect block: ramjet redirects itself
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "tokens")); err == nil {
		t.Errorf("--dry-run wrote the token directory")
	}
}

// adoptLoad requests URLs over new connections and keep-alive ones
// until stopped, counting answers and failures (a transport error, or
// an answer that is not the page wanted). http URLs go to plain, https
// ones to tlsAddr.
type adoptLoad struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	failures   []string
	stop       chan struct{}
	wg         sync.WaitGroup
}

// loadTarget is a URL and the body it must answer with.
type loadTarget struct{ url, want string }

func startAdoptLoad(plain, tlsAddr string, roots *x509.CertPool, targets []loadTarget, workers int) *adoptLoad {
	l := &adoptLoad{stop: make(chan struct{})}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			tr := &http.Transport{DisableKeepAlives: w%2 == 0, DisableCompression: true,
				TLSClientConfig: &tls.Config{RootCAs: roots},
				DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
					target := plain
					if strings.HasSuffix(addr, ":443") {
						target = tlsAddr
					}
					return (&net.Dialer{}).DialContext(ctx, "tcp", target)
				}}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
			for i := w; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				tg := targets[i%len(targets)]
				r, err := tryDo(c, http.MethodGet, tg.url, nil)
				if err == nil && r.Status == 200 && string(r.Body) == tg.want {
					l.ok.Add(1)
					continue
				}
				l.failed.Add(1)
				l.mu.Lock()
				l.failures = append(l.failures, fmt.Sprintf("%s: %v %d %q", tg.url, err, r.Status, r.Body))
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// load starts adoptLoad on the host's plain and TLS sites.
func (h *adoptHost) load() *adoptLoad {
	var ts []loadTarget
	for i := 1; i <= adoptPlainSites; i++ {
		ts = append(ts, loadTarget{fmt.Sprintf("http://s%02d.test/", i), fmt.Sprintf("home of s%02d.test\n", i)})
		if i <= adoptTLSSites { // PHP keeps seeing HTTPS=on once ramjet takes TLS
			ts = append(ts, loadTarget{fmt.Sprintf("https://t%02d.test/", i), fmt.Sprintf("home of t%02d.test over https\n", i)},
				loadTarget{fmt.Sprintf("https://t%02d.test/https.php", i), "https on\n"})
		}
	}
	return startAdoptLoad(h.plain, h.tls, h.pki.ca.Pool(), ts, 6)
}

// check fails the test unless the load had answers and no failure.
func (l *adoptLoad) check(t *testing.T, what string) {
	t.Helper()
	ok, failed, failures := l.end()
	t.Logf("%s under load: %d answered, %d failed", what, ok, failed)
	if failed > 0 || ok == 0 {
		t.Fatalf("%d requests failed during the %s (of %d):\n%s", failed, what, ok+failed, strings.Join(failures[:min(len(failures), 10)], "\n"))
	}
}

func (l *adoptLoad) end() (ok, failed int64, failures []string) {
	close(l.stop)
	l.wg.Wait()
	return l.ok.Load(), l.failed.Load(), l.failures
}

func TestAdoptNginxApplyUnderLoadRefusesNoRequestAndRollbackRestoresThePorts(t *testing.T) {
	h := newAdoptHost(t, "")
	h.start(t)
	out := filepath.Join(h.dir, "ramjet.yaml")
	load := h.load()
	time.Sleep(300 * time.Millisecond) // load on nginx alone first
	code, output := h.adopt(t, "--out", out, "--apply")
	if code != 0 {
		load.end()
		t.Fatalf("adopt --apply exited %d:\n%s", code, output)
	}
	time.Sleep(300 * time.Millisecond) // and on ramjet alone
	load.check(t, "switch")
	c := &http.Client{Timeout: 10 * time.Second}
	r := get(t, c, "http://"+h.plain+"/", "Host: s03.test")
	if r.Status != 200 || r.Header.Get("Cache-Status") == "" || string(r.Body) != "home of s03.test\n" {
		t.Fatalf("after --apply, s03.test: %d %v %q", r.Status, r.Header, r.Body)
	}
	r = get(t, &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, "http://"+h.plain+"/x?y", "Host: t02.test")
	_, tlsPort, _ := net.SplitHostPort(h.tls)
	if r.Status != 301 || r.Header.Get("Location") != "https://t02.test:"+tlsPort+"/x?y" || r.Header.Get("Server") == "nginx" {
		t.Fatalf("after --apply, http://t02.test: %d %v (ramjet redirects to https itself)", r.Status, r.Header)
	}
	r = get(t, c, "http://"+h.origin+"/", "Host: s03.test")
	if r.Status != 200 || r.Header.Get("Cache-Status") != "" {
		t.Fatalf("nginx on the origin address: %d %v", r.Status, r.Header)
	}
	pid := adoptedRamjet(t, filepath.Join(h.dir, "backup"))

	// An operator's edit since --apply: the rollback would lose it, and
	// refuses; with --force it keeps it aside.
	edited := filepath.Join(h.dir, "sites-enabled", "s01.test.conf")
	now, err := os.ReadFile(edited)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(edited, append(now, "# an operator's edit\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, output = testbed.RunRamjet(t, 3*time.Minute, "adopt", "--rollback", "--backup", filepath.Join(h.dir, "backup"))
	if code != 1 || !strings.Contains(output, "edited since --apply") || !strings.Contains(output, edited) {
		t.Fatalf("adopt --rollback with an edited file exited %d:\n%s", code, output)
	}
	if r := get(t, c, "http://"+h.plain+"/", "Host: s03.test"); r.Header.Get("Cache-Status") == "" || !alive(pid) {
		t.Fatalf("a refused rollback changed something: %v, ramjet alive %v", r.Header, alive(pid))
	}

	load = h.load()
	time.Sleep(300 * time.Millisecond)
	code, output = testbed.RunRamjet(t, 3*time.Minute, "adopt", "--rollback", "--force", "--backup", filepath.Join(h.dir, "backup"))
	if code != 0 {
		load.end()
		t.Fatalf("adopt --rollback exited %d:\n%s", code, output)
	}
	time.Sleep(300 * time.Millisecond)
	load.check(t, "rollback")
	h.unchanged(t)
	if kept, err := os.ReadFile(filepath.Join(h.dir, "backup", "current", edited)); err != nil || !strings.HasSuffix(string(kept), "# an operator's edit\n") {
		t.Errorf("the edit was not kept aside (%v): %q", err, kept)
	}
	if alive(pid) {
		t.Fatalf("ramjet (pid %d) still runs after the rollback", pid)
	}
	r = get(t, c, "http://"+h.plain+"/", "Host: s03.test")
	if r.Status != 200 || r.Header.Get("Cache-Status") != "" {
		t.Fatalf("after --rollback nginx answers its old port: %d %v", r.Status, r.Header)
	}
	if _, err := net.DialTimeout("tcp", h.origin, time.Second); err == nil {
		t.Fatalf("nginx still listens on the origin address %s after the rollback", h.origin)
	}
}

// adoptedRamjet is the pid of the ramjet --apply started, from the
// manifest in backup; the test kills it at cleanup if a rollback did not.
func adoptedRamjet(t *testing.T, backup string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(backup, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		PID int `json:"ramjet_pid"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.PID == 0 {
		t.Fatalf("manifest names no ramjet (%v): %s", err, b)
	}
	t.Cleanup(func() { _ = syscall.Kill(m.PID, syscall.SIGKILL) })
	return m.PID
}

// untouched fails the test unless adopt left everything as it was: the
// files, nginx alone on its public address, no backup to roll back to.
func (h *adoptHost) untouched(t *testing.T) {
	t.Helper()
	h.unchanged(t)
	if _, err := os.Stat(filepath.Join(h.dir, "backup", "manifest.json")); err == nil {
		t.Errorf("a backup to roll back to was left")
	}
	r := get(t, &http.Client{Timeout: 10 * time.Second}, "http://"+h.plain+"/", "Host: s01.test")
	if r.Status != 200 || r.Header.Get("Cache-Status") != "" {
		t.Errorf("s01.test on nginx's address: %d %v", r.Status, r.Header)
	}
	// The origin address was free when the host was made, but in a
	// parallel suite another test may since listen on it: what must not
	// answer there is this host's nginx (adopt moving it).
	if c, err := net.DialTimeout("tcp", h.origin, time.Second); err == nil && !h.originTaken {
		c.Close()
		o, err := (&http.Client{Timeout: 5 * time.Second}).Do(mustRequest(t, "http://"+h.origin+"/", "s01.test"))
		if err == nil {
			body, _ := io.ReadAll(o.Body)
			o.Body.Close()
			if o.StatusCode == r.Status && string(body) == string(r.Body) {
				t.Errorf("this host's nginx listens on the origin address %s", h.origin)
			}
		}
	}
}

func TestAdoptNginxRefusesBadInputAndChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(h *adoptHost) string // breaks the host's files; returns what the error must say
	}{
		{"a config nginx -t refuses", func(h *adoptHost) string {
			h.write(t, "sites-enabled/s02.test.conf", "server {\n\tlisten "+h.plain+";\n\tserver_name s02.test;\n\tno_such_directive on;\n}\n")
			return `unknown directive "no_such_directive" in ` + filepath.Join(h.dir, "sites-enabled", "s02.test.conf") + ":4"
		}},
		{"a certificate that does not load", func(h *adoptHost) string {
			h.write(t, "t01.pem", "-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n")
			text := strings.Replace(h.files[filepath.Join(h.dir, "sites-enabled", "t01.test.conf")], filepath.Join(h.pki.dir, "t01.test.crt"), filepath.Join(h.dir, "t01.pem"), 1)
			h.write(t, "sites-enabled/t01.test.conf", text)
			return `cannot load certificate "` + filepath.Join(h.dir, "t01.pem") + `"`
		}},
		{"an origin address in use", func(h *adoptHost) string {
			ln, err := net.Listen("tcp", h.origin)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			h.originTaken = true
			return "--origin " + ln.Addr().String() + ": something listens there already"
		}},
		{"a duplicate server_name", func(h *adoptHost) string {
			h.write(t, "sites-enabled/zz-dup.conf", "server {\n\tlisten "+h.plain+";\n\tserver_name www.s05.test;\n}\n")
			return filepath.Join(h.dir, "sites-enabled", "zz-dup.conf") + `:1: server_name "www.s05.test" on ` + h.plain + " is already declared at " + filepath.Join(h.dir, "sites-enabled", "s05.test.conf") + ":1"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newAdoptHost(t, "")
			h.start(t)
			want := tc.break_(h)
			out := filepath.Join(h.dir, "ramjet.yaml")
			code, output := h.adopt(t, "--out", out, "--apply")
			if code != 1 || !strings.Contains(output, want) {
				t.Fatalf("adopt --apply exited %d, want 1 saying %q:\n%s", code, want, output)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("ramjet's configuration was written")
			}
			h.untouched(t)
		})
	}
}

func TestAdoptNginxShadowCheckStopsOnADifferingSiteAndExcludeLeavesItOut(t *testing.T) {
	// wild.test answers differently whenever a proxy names the client,
	// and so does t05.test over TLS alone (its plain block redirects):
	// through ramjet they would fail.
	h := newAdoptHost(t, "\tif ($http_x_forwarded_for) { return 503; }\n")
	t05 := filepath.Join(h.dir, "sites-enabled", "t05.test.conf")
	h.write(t, "sites-enabled/t05.test.conf", strings.Replace(h.files[t05], "\tindex home.php;\n", "\tindex home.php;\n\tif ($http_x_forwarded_for) { return 503; }\n", 1))
	h.start(t)
	out := filepath.Join(h.dir, "ramjet.yaml")
	code, output := h.adopt(t, "--out", out, "--apply")
	for _, want := range []string{"shadow check: 2 sites answer differently", "wild.test: http://wild.test/: status 503 through ramjet, 200 from the web server",
		"t05.test: https://t05.test/: status 503 through ramjet, 200 from the web server"} {
		if code != 1 || !strings.Contains(output, want) {
			t.Fatalf("adopt --apply exited %d, want 1 saying %q:\n%s", code, want, output)
		}
	}
	h.untouched(t)

	// --shadow-only: the check passes with both left out, and nothing
	// changes.
	code, output = h.adopt(t, "--out", out, "--apply", "--shadow-only", "--exclude", "wild.test,t05.test")
	if code != 0 || !strings.Contains(output, "shadow check: 17 sites through ramjet") || !strings.Contains(output, "(2 left out)") {
		t.Fatalf("adopt --apply --shadow-only --exclude wild.test,t05.test exited %d:\n%s", code, output)
	}
	h.untouched(t)

	code, output = h.adopt(t, "--out", out, "--apply", "--exclude", "wild.test", "--exclude", "t05.test")
	if code != 0 {
		t.Fatalf("adopt --apply --exclude wild.test --exclude t05.test exited %d:\n%s", code, output)
	}
	adoptedRamjet(t, filepath.Join(h.dir, "backup"))
	for _, host := range readAdopted(t, out).Hosts {
		if cached := host.Cache == nil || *host.Cache; cached == (host.Names[0] == "wild.test" || host.Names[0] == "t05.test") {
			t.Errorf("%s: cache %v", host.Names[0], cached)
		}
	}
	r := get(t, &http.Client{Timeout: 10 * time.Second}, "http://"+h.plain+"/", "Host: s01.test")
	if r.Status != 200 || r.Header.Get("Cache-Status") == "" {
		t.Fatalf("s01.test after --apply: %d %v", r.Status, r.Header)
	}
	if code, output := testbed.RunRamjet(t, 3*time.Minute, "adopt", "--rollback", "--backup", filepath.Join(h.dir, "backup")); code != 0 {
		t.Fatalf("adopt --rollback exited %d:\n%s", code, output)
	}
	h.unchanged(t)
}

// mustRequest is a GET of u with the Host host.
func mustRequest(t *testing.T, u, host string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	return req
}
