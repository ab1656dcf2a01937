package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// ramjet purge reads the operator's token from the config and a site
// owner's token from the site's token file, so neither has to be on the
// command line, where every local user reads it (/proc/PID/cmdline).
// Before, --token was the only way: --config and --token-file were
// unknown flags (exit 2).
func TestPurgeCommandKeepsTheTokenOffTheCommandLine(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "a.token")
	if err := os.WriteFile(tokenFile, []byte(tokenA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rj := testbed.NewRamjet(t)
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`admin:
  listen: %q
  token: %s
hosts:
  - names: [a.test, www.a.test]
    admin_token_file: %s
  - names: [b.test]
    admin_token: %s
    cache_size: 4MiB
  - names: [c.test]
`, rj.AdminAddr, operatorToken, tokenFile, tokenB))
	rj.Start(t, "--origin", o.URL, "--config", cfg)
	c := newClient(t)
	ns := nsFor(t)

	ids := cacheTenantPages(t, c, rj, ns)
	code, out, res, err := runPurgeCLI(t, "--admin", rj.AdminURL, "--token-file", tokenFile, "--all")
	if code != 0 || err != nil || !res.All {
		t.Fatalf("ramjet purge --token-file (a.test's) --all: exit %d, %+v (%v); output:\n%s", code, res, err, out)
	}
	code, out, _, _ = runPurgeCLI(t, "--admin", rj.AdminURL, "--token-file", tokenFile, "--all", "--host", "b.test")
	if code == 0 || !strings.Contains(out, "403") {
		t.Fatalf("a.test's token file purging b.test: exit %d, want a refusal with 403; output:\n%s", code, out)
	}
	checkTenantFates(t, c, rj, ns, ids, "a.test/*", "www.a.test/*")

	ns = ns + "-operator" // a second set of pages, all fresh misses
	ids = cacheTenantPages(t, c, rj, ns)
	code, out, res, err = runPurgeCLI(t, "--config", cfg, "--tag", "home")
	if code != 0 || err != nil {
		t.Fatalf("ramjet purge --config --tag home: exit %d, %+v (%v); output:\n%s", code, res, err, out)
	}
	checkTenantFates(t, c, rj, ns, ids, "a.test/home", "www.a.test/home", "b.test/home", "c.test/home")

	code, out = testbed.RunRamjet(t, 15*time.Second, "purge", "--token", tokenA, "--token-file", tokenFile, "--all")
	if code != 2 || !strings.Contains(out, "give one") {
		t.Fatalf("--token with --token-file: exit %d, want 2 and a clear error; output:\n%s", code, out)
	}
}
