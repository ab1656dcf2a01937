package landlock

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// The test binary is its own launcher, as ramjet is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Subcommand {
		err := Main(os.Args[2:], os.Environ())
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(127)
	}
	os.Exit(m.Run())
}

// system is what /bin/cat needs to start.
var system = []string{"/usr", "/bin", "/lib", "/lib64", "/etc"}

func catConfined(t *testing.T, allow []string, file string) (string, error) {
	t.Helper()
	r := Rules{Paths: append(append([]string{}, system...), allow...)}
	cmd := exec.Command(os.Args[0], append([]string{Subcommand}, r.Args(-1, "/bin/cat", []string{file})...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestAConfinedProgramReadsOnlyBeneathItsTrees(t *testing.T) {
	if ABI() < 1 {
		testbed.Skip(t, "no Landlock in this kernel") // fails under RAMJET_TEST_STRICT: CI's kernel has it
	}
	dir := t.TempDir()
	inside, outside := filepath.Join(dir, "inside"), filepath.Join(dir, "outside")
	for _, d := range []string{inside, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte(strings.ToUpper(filepath.Base(d))+"-CONTENT"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "f"), filepath.Join(inside, "link")); err != nil {
		t.Fatal(err)
	}
	if out, err := catConfined(t, []string{inside}, filepath.Join(inside, "f")); err != nil || out != "INSIDE-CONTENT" {
		t.Errorf("a file inside: %q, %v; want it read", out, err)
	}
	for _, f := range []string{filepath.Join(outside, "f"), filepath.Join(inside, "link")} {
		out, err := catConfined(t, []string{inside}, f)
		if err == nil || strings.Contains(out, "OUTSIDE-CONTENT") || !strings.Contains(out, "Permission denied") {
			t.Errorf("%s: %q, %v; want permission denied", f, out, err)
		}
	}
	// A file rule grants that file, not its directory.
	if out, err := catConfined(t, []string{filepath.Join(outside, "f")}, filepath.Join(inside, "link")); err != nil || out != "OUTSIDE-CONTENT" {
		t.Errorf("a file granted by itself, through a link: %q, %v", out, err)
	}
}

func TestLauncherArgumentsRoundTrip(t *testing.T) {
	r := Rules{Paths: []string{"/srv/site", "/usr"}}
	got, fd, argv, err := parse(r.Args(3, "/usr/bin/php-cgi", []string{"-b", "/run/x.sock", "--", "--read"}))
	if err != nil || fd != 3 || !reflect.DeepEqual(got, r) || !reflect.DeepEqual(argv, []string{"/usr/bin/php-cgi", "-b", "/run/x.sock", "--", "--read"}) {
		t.Fatalf("parse: %v %d %q %v", got, fd, argv, err)
	}
}

func TestLauncherRefusesWhatItCannotRead(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--read", "relative", "--", "/bin/true"},
		{"--fd", "x", "--", "/bin/true"},
		{"--read"},
		{"--bogus", "--", "/bin/true"},
		{"--read", "/usr"},
		{"--"},
	} {
		if _, _, _, err := parse(args); err == nil {
			t.Errorf("parse(%q): no error", args)
		}
	}
}

func FuzzLauncherArguments(f *testing.F) {
	f.Add("--fd\x003\x00--read\x00/usr\x00--\x00/bin/true")
	f.Add("--read\x00\x00--")
	f.Fuzz(func(t *testing.T, s string) {
		r, fd, argv, err := parse(strings.Split(s, "\x00"))
		if err != nil {
			return
		}
		// What parses comes out of Args unchanged.
		r2, fd2, argv2, err := parse(r.Args(fd, argv[0], argv[1:]))
		if err != nil || fd2 != fd || !reflect.DeepEqual(r2.Paths, r.Paths) || !reflect.DeepEqual(argv2, argv) {
			t.Fatalf("round trip of %q: %v %d %q %v", s, r2, fd2, argv2, err)
		}
	})
}
