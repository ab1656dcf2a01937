package main_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// swapTree is a docroot with a directory race/ that a tenant swaps for a
// symlink to outside/, beside the docroot: there, a file and a script
// with the same names say OUTSIDE, and a .htaccess would answer every
// error with OUTSIDE.
func swapTree(t *testing.T) (root, outside string) {
	t.Helper()
	root = phpDocroot(t)
	outside = filepath.Join(filepath.Dir(root), "outside")
	write(t, filepath.Join(root, "race/secret.txt"), "inside\n")
	write(t, filepath.Join(root, "race/run.php"), "<?php echo 'inside-php';")
	write(t, filepath.Join(outside, "secret.txt"), "OUTSIDE\n")
	write(t, filepath.Join(outside, "run.php"), "<?php echo 'OUTSIDE-PHP';")
	write(t, filepath.Join(outside, ".htaccess"), "ErrorDocument 403 \"OUTSIDE-HTACCESS\nErrorDocument 404 \"OUTSIDE-HTACCESS\n")
	// An absolute symlink to a file inside, as sites have them.
	if err := os.Symlink(filepath.Join(root, "race/secret.txt"), filepath.Join(root, "abs.txt")); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

// swapOut replaces race/ by a symlink to outside (the tenant's
// `mv race race.real; ln -s OUTSIDE race`); swapIn undoes it.
func swapOut(root, outside string) error {
	if err := os.Rename(filepath.Join(root, "race"), filepath.Join(root, "race.real")); err != nil {
		return err
	}
	return os.Symlink(outside, filepath.Join(root, "race"))
}

func swapIn(root string) error {
	if err := os.Remove(filepath.Join(root, "race")); err != nil {
		return err
	}
	return os.Rename(filepath.Join(root, "race.real"), filepath.Join(root, "race"))
}

func swapRamjet(t *testing.T, root string, htaccess bool) *testbed.Ramjet {
	t.Helper()
	ht := "off"
	if htaccess {
		ht = "on"
	}
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`defaults:
  docroot:
    root: %q
    front_controller: ""
    htaccess: %s
    php:
      workers: 2
`, root, ht))
	return startRamjet(t, "", "--config", cfg)
}

func mustNotLeak(t *testing.T, r result, what string) {
	t.Helper()
	if strings.Contains(string(r.Body), "OUTSIDE") {
		t.Errorf("%s: status %d served what is outside the docroot: %.200q", what, r.Status, r.Body)
	}
}

// TestDocrootSymlinkSwapBetweenRequestsServesNothingOutside: a directory
// looked up by one request and swapped for a symlink to outside the
// docroot before the next (within the second lookups are remembered)
// answers neither the outside file nor the outside script: both are
// opened beneath the docroot again.
func TestDocrootSymlinkSwapBetweenRequestsServesNothingOutside(t *testing.T) {
	for _, htaccess := range []bool{false, true} {
		t.Run(fmt.Sprintf("htaccess=%v", htaccess), func(t *testing.T) {
			root, outside := swapTree(t)
			rj := swapRamjet(t, root, htaccess)
			c := &http.Client{Timeout: 10 * time.Second}
			r := get(t, c, rj.URL+"/race/secret.txt")
			mustStatus(t, r, 200, "the file before the swap")
			r = get(t, c, rj.URL+"/race/run.php")
			mustStatus(t, r, 200, "the script before the swap")
			mustStatus(t, get(t, c, rj.URL+"/abs.txt"), 200, "an absolute symlink inside, before the swap")
			if err := swapOut(root, outside); err != nil {
				t.Fatal(err)
			}
			// A query makes a new cache key; the lookup is the same path's.
			for _, p := range []string{"/race/secret.txt?after", "/race/run.php?after", "/race/none", "/abs.txt?after"} {
				r = get(t, c, rj.URL+p)
				mustNotLeak(t, r, p+" after the swap")
				if r.Status == 200 {
					t.Errorf("%s after the swap: 200 %.100q", p, r.Body)
				}
			}
			if err := swapIn(root); err != nil {
				t.Fatal(err)
			}
			if !testbed.Poll(5*time.Second, func() bool { return get(t, c, rj.URL+"/race/secret.txt?back").Status == 200 }) {
				t.Fatal("the directory swapped back is not served again")
			}
		})
	}
}

// TestDocrootSymlinkSwapLoopNeverServesOutside: while the tenant swaps
// the directory back and forth as fast as it can, requests for the file
// and the script get the inside one or an error, never the outside one.
func TestDocrootSymlinkSwapLoopNeverServesOutside(t *testing.T) {
	root, outside := swapTree(t)
	rj := swapRamjet(t, root, false)
	c := &http.Client{Timeout: 10 * time.Second}
	mustStatus(t, get(t, c, rj.URL+"/race/secret.txt"), 200, "before the swaps")

	stop := make(chan struct{})
	swapped := make(chan error, 1)
	go func() {
		n := 0
		defer func() { swapped <- nil }()
		for n < 20000 {
			select {
			case <-stop:
				return
			default:
			}
			if err := swapOut(root, outside); err != nil {
				swapped <- err
				return
			}
			if err := swapIn(root); err != nil {
				swapped <- err
				return
			}
			n++
		}
	}()
	deadline := time.Now().Add(3 * time.Second)
	ok := 0
	for i := 0; i < 3000 && time.Now().Before(deadline) && !t.Failed(); i++ {
		for _, p := range []string{"/race/secret.txt", "/race/run.php"} {
			r := get(t, c, fmt.Sprintf("%s%s?%d", rj.URL, p, i))
			mustNotLeak(t, r, p+" during the swaps")
			if r.Status == 200 {
				ok++
			}
		}
	}
	close(stop)
	if err := <-swapped; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d answers from inside the docroot during the swaps", ok)
}

// TestDocrootHtaccessBehindSymlinkToOutsideIsNotRead: a directory that
// is a symlink to outside the docroot has its .htaccess refused (403),
// not read: an outside file never configures the site.
func TestDocrootHtaccessBehindSymlinkToOutsideIsNotRead(t *testing.T) {
	root, outside := swapTree(t)
	if err := os.Symlink(outside, filepath.Join(root, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	rj := swapRamjet(t, root, true)
	c := &http.Client{Timeout: 10 * time.Second}
	r := get(t, c, rj.URL+"/elsewhere/none")
	mustNotLeak(t, r, "a file under a symlinked directory")
	mustStatus(t, r, 403, "a file under a symlinked directory")
}

// phpOffTree is a docroot whose .htaccess files deny .php in uploads/
// or switch PHP off in the ways sites and security plugins do.
func phpOffTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(testbed.PublicDir(t), "www")
	const script = "<?php echo 'RAN'; // SOURCE"
	for name, body := range map[string]string{
		"ok.php":              "<?php echo 'ok';",
		"uploads/.htaccess":   "<FilesMatch \"\\.php$\">\nRequire all denied\n</FilesMatch>\n",
		"uploads/index.php":   script,
		"off/.htaccess":       "php_flag engine off\n",
		"off/index.php":       script,
		"off/x.php":           script,
		"admin/.htaccess":     "php_admin_flag engine off\n",
		"admin/x.php":         script,
		"handler/.htaccess":   "<FilesMatch \\.php$>\nSetHandler none\n</FilesMatch>\n",
		"handler/x.php":       script,
		"removed/.htaccess":   "RemoveHandler .php\n",
		"removed/x.php":       script,
		"wordfence/.htaccess": "<IfModule mod_php7.c>\nphp_flag engine 0\n</IfModule>\nAddHandler cgi-script .php .phtml .pl\nOptions -ExecCGI\n",
		"wordfence/x.php":     script,
	} {
		write(t, filepath.Join(root, name), body)
	}
	return root
}

// TestDocrootIndexMeetsFilesRulesAndPHPOffIsNeverRun: an uploaded
// uploads/index.php denied by <FilesMatch "\.php$"> is denied at
// /uploads/ too (as Apache denies it), and a script where the site
// switched PHP off (php_flag engine off, SetHandler none, RemoveHandler,
// Wordfence's block) answers 403: never run, never its source.
func TestDocrootIndexMeetsFilesRulesAndPHPOffIsNeverRun(t *testing.T) {
	root := phpOffTree(t)
	rj := htaccessRamjet(t, root)
	c := &http.Client{Timeout: 10 * time.Second}
	mustStatus(t, get(t, c, rj.URL+"/ok.php"), 200, "a script where PHP is on")
	for _, p := range []string{"/uploads/", "/uploads/index.php", "/off/", "/off/x.php", "/admin/x.php",
		"/handler/x.php", "/removed/x.php", "/wordfence/x.php"} {
		r := get(t, c, rj.URL+p)
		if r.Status != 403 || strings.Contains(string(r.Body), "RAN") || strings.Contains(string(r.Body), "SOURCE") {
			t.Errorf("%s: %d %.100q, want 403 and neither output nor source", p, r.Status, r.Body)
		}
	}
	ap := htaccessApache(t, root)
	mustStatus(t, get(t, c, ap.URL+"/uploads/"), 403, "Apache's answer for the denied index")
}
