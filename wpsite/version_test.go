package wpsite

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// wordpressVersionPHP is the head of WordPress's own version.php: the doc
// comment names $wp_version before the assignment does.
const wordpressVersionPHP = `<?php
/**
 * WordPress Version
 *
 * Contains version information for the current WordPress release.
 *
 * @package WordPress
 * @since 1.2.0
 */

/**
 * The WordPress version string.
 *
 * Holds the current version number for WordPress core. Used to bust caches
 * and to enable development mode for scripts when running from the /src directory.
 *
 * @global string $wp_version
 */
$wp_version = '6.1.9';

/**
 * Holds the WordPress DB revision, increments when changes are made to the WordPress DB schema.
 *
 * @global int $wp_db_version
 */
$wp_db_version = 53496;
`

func TestParseVersionReadsTheAssignmentOnly(t *testing.T) {
	tests := []struct {
		name, src, want string
		err             error
	}{
		{"WordPress's file", wordpressVersionPHP, "6.1.9", nil},
		{"double quotes and spacing", "<?php\n\t$wp_version=\"6.5-RC2-57000\" ;\n", "6.5-RC2-57000", nil},
		{"the first plain assignment wins", "<?php\n$wp_version = '6.4';\n$wp_version = '9.9';\n", "6.4", nil},
		{"mismatched quotes", "<?php\n$wp_version = '6.4\";\n", "", ErrNoVersion},
		{"code instead of a string", "<?php\n$wp_version = get_version();\n", "", ErrNoVersion},
		{"a value with other characters", "<?php\n$wp_version = '6.4 <script>';\n", "", ErrNoVersion},
		{"a value too long", "<?php\n$wp_version = '" + strings.Repeat("1", 33) + "';\n", "", ErrNoVersion},
		{"inside a comment line only", "<?php\n// $wp_version = '6.4';\n", "", ErrNoVersion},
		{"empty", "", "", ErrNoVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseVersion([]byte(tt.src))
			if got != tt.want || !errors.Is(err, tt.err) {
				t.Errorf("ParseVersion = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

var versionChars = regexp.MustCompile(`^[0-9A-Za-z.+-]{1,32}$`)

// FuzzParseVersion: whatever a site's version.php holds, the version is a
// short plain string found in the file, or an error.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{wordpressVersionPHP, "<?php $wp_version = '6.4';", "$wp_version = \"1\";\n", "$wp_version = '';", "\n  $wp_version\t=\t'6.0-beta1' ;"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		v, err := ParseVersion(src)
		if err != nil {
			if v != "" {
				t.Fatalf("version %q with error %v", v, err)
			}
			return
		}
		if !versionChars.MatchString(v) || !strings.Contains(string(src), v) {
			t.Fatalf("version %q from %q", v, src)
		}
	})
}

// TestReadVersionFollowsNoSymlinkOfTheInstall: ramjet wp reads
// version.php as root, so a wp-includes that is a symlink (to a directory
// its owner may not read) is refused, as is a version.php that is one or
// that is no regular file.
func TestReadVersionFollowsNoSymlinkOfTheInstall(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	for _, d := range []string{"secret", "linked", "fifo/wp-includes", "plain/wp-includes"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "version.php"), []byte("<?php\n$wp_version = 'rootsecret';\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain/wp-includes/version.php"), []byte("<?php\n$wp_version = '6.4.2';\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "linked", "wp-includes")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo/wp-includes/version.php"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := readVersion(filepath.Join(dir, "plain")); v != "6.4.2" || err != nil {
		t.Errorf("plain install: %q, %v", v, err)
	}
	for _, bad := range []string{"linked", "fifo"} {
		if v, err := readVersion(filepath.Join(dir, bad)); err == nil {
			t.Errorf("%s: read version %q through it", bad, v)
		}
	}
}
