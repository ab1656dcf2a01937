package phppool

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"golang.org/x/sys/unix"
)

func TestWorkersGetOnlyTheConfiguredEnvironment(t *testing.T) {
	t.Setenv("RAMJET_TEST_SECRET", "hunter2")
	t.Setenv("RAMJET_PASSED", "given")
	for _, engine := range []Engine{EngineShared, EngineSeparate} {
		t.Run(string(engine), func(t *testing.T) {
			p := startPool(t, Config{Engine: engine, Env: []string{"APP_ENV=prod", "RAMJET_PASSED", "RAMJET_UNSET"}}, nil)
			out, err := runFor(p, testdataScript(t, "identity.php"), "GET", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"getenv false\n", "server NULL\n", "app 'prod'\n", "passed 'given'\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("PHP's environment: want %q in\n%s", want, out)
				}
			}
		})
	}
}

// The capabilities the packaged unit grants ramjet (conf/ramjet.service's
// AmbientCapabilities), as a non-root user holds them.
var unitCaps = []uintptr{unix.CAP_SETUID, unix.CAP_SETGID, unix.CAP_CHOWN, unix.CAP_KILL, unix.CAP_SYS_PTRACE, unix.CAP_DAC_READ_SEARCH}

// TestNonRootRamjetWithTheUnitsCapabilitiesRunsPHPWithoutThem runs this
// test binary again as user daemon holding unitCaps as ambient
// capabilities, as systemd starts ramjet under the packaged unit; that
// process runs a pool as nobody (runAsUnitChild). PHP must run as nobody
// with no capability at all: a uid change between two non-root users
// keeps capabilities, and ambient ones survive exec.
func TestNonRootRamjetWithTheUnitsCapabilitiesRunsPHPWithoutThem(t *testing.T) {
	if os.Getenv("RAMJET_PHPPOOL_UNIT_CHILD") != "" {
		runAsUnitChild(t)
		return
	}
	if os.Geteuid() != 0 {
		testbed.Skip(t, "starting a process with ambient capabilities as another user needs root")
	}
	daemon, err := user.Lookup("daemon")
	if err != nil {
		testbed.Skipf(t, "no daemon user: %v", err)
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	bin := copyTestBinary(t)
	script := testdataScript(t, "identity.php")
	for _, engine := range []Engine{EngineShared, EngineSeparate} {
		t.Run(string(engine), func(t *testing.T) {
			cmd := exec.Command(bin, "-test.run=^TestNonRootRamjetWithTheUnitsCapabilitiesRunsPHPWithoutThem$", "-test.v")
			cmd.Env = []string{"RAMJET_PHPPOOL_UNIT_CHILD=1", "RAMJET_SCRIPT=" + script, "RAMJET_ENGINE=" + string(engine),
				"RAMJET_TEST_SECRET=hunter2", "PATH=/usr/bin:/bin"}
			cmd.Dir = "/"
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			uid, gid := atoi(t, daemon.Uid), atoi(t, daemon.Gid)
			cmd.SysProcAttr = &syscall.SysProcAttr{
				Credential:  &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
				AmbientCaps: unitCaps,
			}
			if err := cmd.Run(); err != nil {
				t.Fatalf("child as daemon: %v\n%s", err, out.String())
			}
			got := out.String()
			for _, want := range []string{"uid " + nobody.Uid + "\n", "CapInh:\t0000000000000000\n", "CapPrm:\t0000000000000000\n",
				"CapEff:\t0000000000000000\n", "CapAmb:\t0000000000000000\n", "getenv false\n"} {
				if !strings.Contains(got, want) {
					t.Errorf("PHP under a non-root ramjet with capabilities: want %q in\n%s", want, got)
				}
			}
		})
	}
}

// runAsUnitChild is the child's side: a pool as nobody, one request, and
// its output on stdout.
func runAsUnitChild(t *testing.T) {
	if !canSwitchUser(os.Geteuid()) {
		t.Fatalf("the child holds no CAP_SETUID/CAP_SETGID (euid %d)", os.Geteuid())
	}
	p, err := New(Config{Name: "unit", Binary: phpCGIPath, Engine: Engine(os.Getenv("RAMJET_ENGINE")), User: "nobody", Max: 2},
		slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := p.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	out, err := runFor(p, os.Getenv("RAMJET_SCRIPT"), "GET", "")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Print(out)
}

// copyTestBinary copies the running test binary where every user may
// run it (go test's build directory is root's alone).
func copyTestBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(testbed.PublicDir(t), "phppool.test")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
