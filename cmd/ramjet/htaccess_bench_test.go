package main_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// BenchmarkHtaccessAgainstApache serves one WordPress-shaped tree with
// WordPress's and the LiteSpeed Cache plugin's .htaccess from Apache 2.4
// (AllowOverride All, php-fpm) and from ramjet's docroot mode with
// .htaccess on and off (off: front_controller does WordPress's rewrite),
// and loads each with wrk. It reports requests per second and, for
// ramjet, its CPU per request (steadier than the rate on a shared
// machine; PHP's workers are not in it); run it once:
//
//	go test -run=NONE -bench=HtaccessAgainstApache -benchtime=1x ./cmd/ramjet/
func BenchmarkHtaccessAgainstApache(b *testing.B) {
	base := testbed.PublicDir(b)
	root := filepath.Join(base, "www")
	src, err := os.ReadFile("../../proxy/htaccess/testdata/wordpress.htaccess")
	if err != nil {
		b.Fatal(err)
	}
	for name, body := range map[string]string{
		".htaccess":            string(src),
		"index.php":            "<?php header('X-LiteSpeed-Cache-Control: public,max-age=600'); echo str_repeat('<p>post</p>', 60);",
		"hello.php":            "<?php echo 'Hello, World!';",
		"wp-content/style.css": "body { color: black }\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fpm := testbed.StartPHPFPM(b, "pm = static\npm.max_children = 4\n")
	cfg := testbed.ApacheOrigin(b, fpm.Addr, fmt.Sprintf("\tDocumentRoot %[1]s\n\tDirectoryIndex index.php\n\t<Directory %[1]s>\n\t\tAllowOverride All\n\t\tRequire all granted\n\t</Directory>\n", root))
	cfg.Modules = append(cfg.Modules, "expires")
	ap := testbed.StartApache(b, cfg)
	ramjet := func(htaccess bool) *testbed.Ramjet {
		front := `"/index.php"`
		if htaccess {
			front = `""`
		}
		c := testbed.WriteConfig(b, "", fmt.Sprintf("defaults:\n  docroot:\n    root: %q\n    front_controller: %s\n    htaccess: %v\n    static_ttl: 1h\n    php:\n      workers: 4\n      min_workers: 4\n", root, front, htaccess))
		return startRamjet(b, "", "--config", c)
	}
	on, off := ramjet(true), ramjet(false)
	targets := []struct {
		name, url string
		pid       int // 0: not measured (Apache's work is spread over its children)
	}{{"apache", ap.URL, 0}, {"ramjet-htaccess-on", on.URL, on.Pid()}, {"ramjet-htaccess-off", off.URL, off.Pid()}}
	c := &http.Client{Timeout: 10 * time.Second}
	for _, page := range []string{"/wp-content/style.css", "/hello-world/", "/hello.php"} {
		for _, tg := range targets {
			b.Run(page+"/"+tg.name, func(b *testing.B) {
				for range 2 { // warm: the page cached, workers started
					if r := get(b, c, tg.url+page); r.Status != 200 {
						b.Fatalf("%s: status %d", tg.url+page, r.Status)
					}
				}
				cpu := testbed.CPUTime(tg.pid)
				res := testbed.Wrk(b, tg.url+page, 50, 4*time.Second)
				if res.Errors > 0 {
					b.Fatalf("%d error responses:\n%s", res.Errors, res.Output)
				}
				if tg.pid != 0 && res.Requests > 0 {
					b.ReportMetric(float64(testbed.CPUTime(tg.pid)-cpu)/1e3/float64(res.Requests), "cpu-µs/req")
				}
				// Apache closes a keep-alive connection after 100 requests
				// (Debian's MaxKeepAliveRequests); wrk counts a read error
				// and reconnects.
				b.ReportMetric(float64(res.Requests)/4, "req/s")
			})
		}
	}
}
