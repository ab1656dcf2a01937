package wordpress_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestPluginPHPUnit runs the plugin's PHPUnit tests (tag and purge logic
// with WordPress stubbed), so `go test ./...` and CI run them too.
func TestPluginPHPUnit(t *testing.T) {
	bin, err := exec.LookPath("phpunit")
	if err != nil {
		t.Fatalf("phpunit not found (%v); .ci/deps installs the Debian package phpunit", err)
	}
	cmd := exec.Command(bin, "--configuration", "phpunit.xml.dist")
	cmd.Dir = "../ramjet-cache"
	out, err := testbed.RunCmd(cmd, 2*time.Minute)
	if err != nil {
		t.Fatalf("phpunit: %v\n%s", err, out)
	}
	t.Logf("phpunit:\n%s", out)
}
