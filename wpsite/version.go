package wpsite

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"syscall"
)

// maxVersionFile bounds how much of wp-includes/version.php is read
// (WordPress's is under 2 KiB).
const maxVersionFile = 64 << 10

// ErrNoVersion: version.php assigns no $wp_version string.
var ErrNoVersion = errors.New("no $wp_version assignment")

// versionLine is WordPress's own line, `$wp_version = '6.4.2';`, at the
// start of a line (the doc comment above it names $wp_version too).
var versionLine = regexp.MustCompile(`(?m)^[ \t]*\$wp_version[ \t]*=[ \t]*(['"])([0-9A-Za-z.+-]{1,32})(['"])[ \t]*;`)

// ParseVersion returns the WordPress version that version.php's source
// src assigns. The file is read as text, never run: only a plain quoted
// version of at most 32 letters, digits, dots, '+' and '-' is taken.
func ParseVersion(src []byte) (string, error) {
	for _, m := range versionLine.FindAllSubmatch(src, -1) {
		if string(m[1]) == string(m[3]) {
			return string(m[2]), nil
		}
	}
	return "", ErrNoVersion
}

// readVersion reads the version of the install at dir from
// wp-includes/version.php, which must be a regular file (not a symlink
// leading elsewhere).
func readVersion(dir string) (string, error) {
	path := dir + "/wp-includes/version.php"
	f, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxVersionFile))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	v, err := ParseVersion(src)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// openRegular opens path for reading when it is a regular file itself:
// not a symlink (O_NOFOLLOW, so it cannot lead outside the install), a
// directory, or a FIFO that would block (O_NONBLOCK).
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
