package wpsite

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"

	"golang.org/x/sys/unix"
)

// maxVersionFile bounds how much of wp-includes/version.php is read
// (WordPress's is under 2 KiB).
const maxVersionFile = 64 << 10

// ErrNoVersion: version.php assigns no $wp_version string.
var ErrNoVersion = errors.New("no $wp_version assignment")

// versionLine is WordPress's own line, `$wp_version = '6.4.2';`, at the
// start of a line (the doc comment above it names $wp_version too).
// Compiled on first use: `ramjet serve` never parses a version, and a
// package-level pattern would be built (and held) by every process.
var versionLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*\$wp_version[ \t]*=[ \t]*(['"])([0-9A-Za-z.+-]{1,32})(['"])[ \t]*;`)
})

// ParseVersion returns the WordPress version that version.php's source
// src assigns. The file is read as text, never run: only a plain quoted
// version of at most 32 letters, digits, dots, '+' and '-' is taken.
func ParseVersion(src []byte) (string, error) {
	for _, m := range versionLine().FindAllSubmatch(src, -1) {
		if string(m[1]) == string(m[3]) {
			return string(m[2]), nil
		}
	}
	return "", ErrNoVersion
}

// readVersion reads the version of the install at dir from
// wp-includes/version.php. ramjet wp runs as root and the install is its
// owner's: neither wp-includes nor version.php may be a symlink (which
// could lead root to a file its owner may not read), and version.php must
// be a regular file.
func readVersion(dir string) (string, error) {
	path := dir + "/wp-includes/version.php"
	f, err := openBeneath(dir, "wp-includes", "version.php")
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
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

// openBeneath opens dir/sub/name for reading, each of sub and name opened
// from the one before without following a symlink (O_NOFOLLOW), so that
// a rename between a check and the open cannot lead elsewhere; name must
// be a regular file (not a FIFO that would block, nor a device).
func openBeneath(dir, sub, name string) (*os.File, error) {
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(d)
	s, err := unix.Openat(d, sub, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: it must be a directory of the install itself, not a symlink", sub, err)
	}
	defer unix.Close(s)
	var st unix.Stat_t
	if err := unix.Fstatat(s, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errors.New("not a regular file")
	}
	fd, err := unix.Openat(s, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	return f, nil
}
