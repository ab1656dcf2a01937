package main_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestAdoptNginxOnIPv4AndIPv6LoopbackMovesEveryQueuedConnection adopts
// an nginx whose sites listen on 127.0.0.1:P and [::1]:P (nginx's usual
// pair of sockets) under load on both: ramjet takes both addresses on
// sockets of their own (listen as a list), so that the connections
// queued on each of nginx's sockets move to ramjet's of the same
// address and family when nginx lets go of it; no request fails, and
// the rollback gives both back.
func TestAdoptNginxOnIPv4AndIPv6LoopbackMovesEveryQueuedConnection(t *testing.T) {
	ports := testbed.FreePorts(t, 3)
	h := &adoptHost{dir: t.TempDir(), files: map[string]string{},
		plain: fmt.Sprintf("127.0.0.1:%d", ports[0]), origin: fmt.Sprintf("127.0.0.1:%d", ports[1]), admin: fmt.Sprintf("127.0.0.1:%d", ports[2])}
	v6 := fmt.Sprintf("[::1]:%d", ports[0])
	if ln, err := net.Listen("tcp6", v6); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		_ = ln.Close() // only whether it binds
	}
	h.conf, h.errorLog = filepath.Join(h.dir, "nginx.conf"), filepath.Join(h.dir, "error.log")
	user := ""
	if os.Geteuid() == 0 {
		user = "user root root;\n"
	}
	h.write(t, "nginx.conf", fmt.Sprintf("%[1]spid %[2]s/nginx.pid;\nerror_log %[3]s warn;\nworker_processes 2;\nevents { worker_connections 1024; }\n"+
		"http {\n\taccess_log off;\n\tclient_body_temp_path %[2]s/tmp;\n\tproxy_temp_path %[2]s/tmp;\n\tfastcgi_temp_path %[2]s/tmp;\n\tuwsgi_temp_path %[2]s/tmp;\n\tscgi_temp_path %[2]s/tmp;\n"+
		"\tdefault_type text/plain;\n\tinclude sites-enabled/*.conf;\n}\n", user, h.dir, h.errorLog))
	var targets []loadTarget
	for i := 1; i <= 3; i++ {
		n := fmt.Sprintf("s%02d.test", i)
		h.site(t, n, n, fmt.Sprintf("server {\n\tlisten %s;\n\tlisten %s;\n\tserver_name %s;\n\troot %s;\n}\n", h.plain, v6, n, h.docroot(t, n)))
		targets = append(targets, loadTarget{"http://" + n + "/", "home of " + n + "\n"})
	}
	h.start(t)
	out := filepath.Join(h.dir, "ramjet.yaml")
	loads := func() []*adoptLoad {
		return []*adoptLoad{startAdoptLoad(h.plain, "", nil, targets, 4), startAdoptLoad(v6, "", nil, targets, 4)}
	}
	check := func(ls []*adoptLoad, what string) {
		t.Helper()
		for i, l := range ls {
			l.check(t, fmt.Sprintf("%s (%s)", what, []string{"IPv4", "IPv6"}[i]))
		}
	}
	ls := loads()
	time.Sleep(300 * time.Millisecond) // load on nginx alone first
	code, output := h.adopt(t, "--out", out, "--apply")
	if code != 0 {
		check(ls, "failed switch")
		t.Fatalf("adopt --apply exited %d:\n%s", code, output)
	}
	time.Sleep(300 * time.Millisecond) // and on ramjet alone
	check(ls, "switch")
	written, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(written), "listen:\n  - "+h.plain+"\n  - '"+v6+"'\n") {
		t.Fatalf("ramjet's config does not list both addresses (%v):\n%s", err, written)
	}
	adoptedRamjet(t, filepath.Join(h.dir, "backup"))
	c := &http.Client{Timeout: 10 * time.Second}
	for _, a := range []string{h.plain, v6} {
		if r := get(t, c, "http://"+a+"/", "Host: s02.test"); r.Status != 200 || r.Header.Get("Cache-Status") == "" {
			t.Fatalf("after --apply, %s: %d %v (ramjet answers both)", a, r.Status, r.Header)
		}
	}

	ls = loads()
	time.Sleep(300 * time.Millisecond)
	code, output = testbed.RunRamjet(t, 3*time.Minute, "adopt", "--rollback", "--backup", filepath.Join(h.dir, "backup"))
	if code != 0 {
		check(ls, "failed rollback")
		t.Fatalf("adopt --rollback exited %d:\n%s", code, output)
	}
	time.Sleep(300 * time.Millisecond)
	check(ls, "rollback")
	h.unchanged(t)
	for _, a := range []string{h.plain, v6} {
		if r := get(t, c, "http://"+a+"/", "Host: s02.test"); r.Status != 200 || r.Header.Get("Cache-Status") != "" {
			t.Fatalf("after --rollback, %s: %d %v (nginx answers both)", a, r.Status, r.Header)
		}
	}
}
