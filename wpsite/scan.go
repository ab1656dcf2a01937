package wpsite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNotWordPress: the directory holds no WordPress install.
var ErrNotWordPress = errors.New("not a WordPress install")

// FlagFiles opt an install out of enable when one of them is in its
// directory: ramjet's own, and LiteSpeed's (lscmctl flag), so that an
// install a host flagged for LiteSpeed stays out of ramjet too.
var FlagFiles = []string{".ramjet_flag", ".litespeed_flag"}

// Install is one WordPress install found on disk.
type Install struct {
	Path    string // the directory holding wp-includes (absolute, clean)
	Config  string // its wp-config.php: in Path, or in Path's parent
	Version string // from wp-includes/version.php
	Owner   Owner  // who owns Path: everything inside runs as them
	OptOut  string // the flag file present in Path, or ""
}

// Inspect reads the install at dir. It fails with ErrNotWordPress when dir
// has no wp-includes/version.php, or no wp-config.php in dir or its parent
// (the parent's only counts when it is not a WordPress of its own, as
// WordPress itself looks).
func Inspect(dir string) (Install, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Install{}, fmt.Errorf("%s: %w", dir, err)
	}
	in := Install{Path: abs}
	fi, err := os.Stat(abs)
	if err != nil {
		return in, fmt.Errorf("%s: %w", abs, err)
	}
	if !fi.IsDir() {
		return in, fmt.Errorf("%s: %w: not a directory", abs, ErrNotWordPress)
	}
	if _, err := os.Lstat(filepath.Join(abs, "wp-includes", "version.php")); err != nil {
		return in, fmt.Errorf("%s: %w: no wp-includes/version.php", abs, ErrNotWordPress)
	}
	if in.Config = configFile(abs); in.Config == "" {
		return in, fmt.Errorf("%s: %w: no wp-config.php in it or its parent", abs, ErrNotWordPress)
	}
	if in.Version, err = readVersion(abs); err != nil {
		return in, err
	}
	if in.Owner, err = ownerOf(abs, fi); err != nil {
		return in, err
	}
	for _, f := range FlagFiles {
		if _, err := os.Lstat(filepath.Join(abs, f)); err == nil {
			in.OptOut = f
			break
		}
	}
	return in, nil
}

// configFile is wp-load.php's search: dir/wp-config.php, else the
// parent's when the parent holds no wp-settings.php.
func configFile(dir string) string {
	if exists(filepath.Join(dir, "wp-config.php")) {
		return filepath.Join(dir, "wp-config.php")
	}
	parent := filepath.Dir(dir)
	if exists(filepath.Join(parent, "wp-config.php")) && !exists(filepath.Join(parent, "wp-settings.php")) {
		return filepath.Join(parent, "wp-config.php")
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// skipDirs are never searched: WordPress's own trees (an install's
// plugins hold no install) and tool caches.
var skipDirs = map[string]bool{"wp-admin": true, "wp-includes": true, "wp-content": true, "node_modules": true, "vendor": true}

// Find walks each root down to depth levels (root itself is 0) and
// returns the installs under them, each once, in path order. Symlinks
// are not followed. A root that cannot be read is an error; a directory
// below it that cannot be read, or an install that cannot be inspected,
// is reported in problems and skipped.
func Find(roots []string, depth int) (installs []Install, problems []error, err error) {
	seen := map[string]bool{}
	for _, root := range roots {
		root, err = filepath.Abs(root)
		if err != nil {
			return nil, nil, err
		}
		if _, err := os.Stat(root); err != nil {
			return nil, nil, fmt.Errorf("wp scan: root %w", err)
		}
		walkErr := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				problems = append(problems, err)
				return skipOnError(d)
			}
			if !d.IsDir() {
				return nil
			}
			if p != root && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if exists(filepath.Join(p, "wp-includes", "version.php")) && !seen[p] {
				seen[p] = true
				in, err := Inspect(p)
				if err != nil {
					problems = append(problems, err)
				} else {
					installs = append(installs, in)
				}
			}
			if levels(root, p) >= depth {
				return filepath.SkipDir
			}
			return nil
		})
		if walkErr != nil {
			return nil, nil, fmt.Errorf("wp scan: %w", walkErr)
		}
	}
	sortInstalls(installs)
	return installs, problems, nil
}

// skipOnError goes on past an unreadable directory (d is nil for the
// root, whose failure Find has ruled out).
func skipOnError(d fs.DirEntry) error {
	if d != nil && d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

// levels is how many directories p lies below root.
func levels(root, p string) int {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." {
		return 0
	}
	return strings.Count(rel, string(filepath.Separator)) + 1
}

func sortInstalls(ins []Install) {
	slices.SortFunc(ins, func(a, b Install) int { return strings.Compare(a.Path, b.Path) })
}
