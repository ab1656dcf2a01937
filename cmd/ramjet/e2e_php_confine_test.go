package main_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/landlock"
	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// confinedRamjet serves root in docroot mode with docroot.php.confine
// and read_paths as given.
func confinedRamjet(t *testing.T, root, confine string, readPaths ...string) *testbed.Ramjet {
	t.Helper()
	rp := ""
	for _, p := range readPaths {
		rp += fmt.Sprintf("\n      - %q", p)
	}
	if rp != "" {
		rp = "\n    read_paths:" + rp
	}
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`defaults:
  docroot:
    root: %q
    front_controller: ""
    php:
      workers: 1
      confine: %s%s
`, root, confine, strings.ReplaceAll(rp, "\n    ", "\n      ")))
	return startRamjet(t, "", "--config", cfg)
}

// A script inside the docroot that includes, reads or runs a file
// outside it gets nothing of it: PHP is confined to the docroot (and
// what the system needs), as open_basedir intends, by the kernel. With
// the outside tree in read_paths, or confinement off, the same script
// reaches it: the confinement is what refuses.
func TestPHPReadsNothingOutsideTheDocrootButItsReadPaths(t *testing.T) {
	if landlock.ABI() < 1 {
		testbed.Skip(t, "this kernel has no Landlock")
	}
	root, outside := swapTree(t)
	write(t, filepath.Join(outside, "lib.php"), "<?php echo 'OUTSIDE-LIB';")
	write(t, filepath.Join(root, "reach.php"), fmt.Sprintf(`<?php
echo 'start;';
echo @file_get_contents(%[1]q), ';';
if (@include %[2]q) { echo ';'; }
echo @scandir(%[3]q) ? 'listed' : 'unlisted', ';';
echo 'end';`, filepath.Join(outside, "secret.txt"), filepath.Join(outside, "lib.php"), outside))
	write(t, filepath.Join(root, "tmp.php"), `<?php
$f = tempnam(sys_get_temp_dir(), 'x'); file_put_contents($f, 'TMP-OK'); echo file_get_contents($f); unlink($f);`)
	c := &http.Client{Timeout: 10 * time.Second}

	rj := confinedRamjet(t, root, "on")
	r := get(t, c, rj.URL+"/reach.php")
	mustStatus(t, r, http.StatusOK, "confined: the script inside")
	if b := string(r.Body); !strings.HasPrefix(b, "start;") || !strings.HasSuffix(b, "unlisted;end") || strings.Contains(b, "OUTSIDE") {
		t.Errorf("confined: the script reached outside the docroot: %q", b)
	}
	r = get(t, c, rj.URL+"/tmp.php")
	if r.Status != http.StatusOK || string(r.Body) != "TMP-OK" {
		t.Errorf("confined: a temporary file: %d %q, want PHP's own temporary directory to work", r.Status, r.Body)
	}

	for _, c2 := range []struct {
		name    string
		confine string
		paths   []string
	}{{"read_paths", "on", []string{outside}}, {"confine off", "off", nil}} {
		rj := confinedRamjet(t, root, c2.confine, c2.paths...)
		r := get(t, c, rj.URL+"/reach.php")
		if b := string(r.Body); !strings.Contains(b, "OUTSIDE\n;OUTSIDE-LIB;listed;end") {
			t.Errorf("%s: %d %q, want the outside tree reached", c2.name, r.Status, b)
		}
	}
}

// A confine value other than auto, on or off and a relative read_paths
// entry are config errors.
func TestPHPConfineSettingsAreChecked(t *testing.T) {
	root := phpDocroot(t)
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`defaults:
  docroot:
    root: %q
    php:
      confine: maybe
      read_paths: [relative/dir]
`, root))
	code, out := testbed.RunRamjet(t, 15*time.Second, "check", "--config", cfg)
	if code == 0 || !strings.Contains(out, "docroot.php.confine") || !strings.Contains(out, "read_paths[0]") {
		t.Errorf("check: exit %d\n%s\nwant both settings refused", code, out)
	}
}
