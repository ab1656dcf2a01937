package phppool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ramjet-proxy/ramjet/internal/landlock"
)

// Confine starts php-cgi through a Landlock launcher: its processes may
// open, list and run files only beneath Paths, the system's trees
// (systemPaths), php-cgi's own, the pool's php.ini and the files its INI
// settings name, and a private temporary directory. The kernel checks the
// file a path reaches, so a symlink a tenant swaps in between ramjet's
// check of a script and php-cgi's open of it leads nowhere: PHP never
// reads or runs a file outside its trees, as open_basedir intends but
// without its races. Writing is left to the workers' user's permissions.
type Confine struct {
	// Launcher is the program that confines and then execs php-cgi
	// (ramjet itself, which runs landlock.Main for landlock.Subcommand).
	Launcher string
	// Paths are the site's trees: its docroot and what its PHP must also
	// read (a wp-config.php above the docroot, shared libraries).
	Paths []string
}

// systemPaths are what php-cgi, its extensions and the programs PHP runs
// read: binaries and libraries, configuration, zoneinfo and certificates,
// /proc and /sys, Debian's session directory and the few devices PHP
// opens. World-writable places (/tmp, /var/tmp, /dev/shm, /run/lock) are
// left out: anyone could put a script there. Missing ones are skipped.
var systemPaths = []string{
	"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys",
	"/var/lib/php", "/run/systemd/resolve",
	"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom",
}

// pathINI are php.ini settings naming files php-cgi reads; the trees
// they name are granted with the rest.
var pathINI = []string{"auto_prepend_file", "auto_append_file", "opcache.preload", "session.save_path",
	"upload_tmp_dir", "sys_temp_dir", "opcache.blacklist_filename", "opcache.file_cache", "opcache.lockfile_path"}

// confinement is a pool's Confine, made ready to start processes.
type confinement struct {
	launcher *os.File // the launcher, passed to each start as fd 3
	paths    []string // every tree granted but the private tmp
}

// newConfinement checks that the kernel can confine and opens the
// launcher: workers run as a user that may not reach ramjet's binary by
// its path (a 0700 directory), but may exec it through an inherited fd.
func newConfinement(c *Confine, cfg Config, bin string) (*confinement, error) {
	if landlock.ABI() < 1 {
		return nil, fmt.Errorf("confine: %w", landlock.ErrUnsupported)
	}
	f, err := os.Open(c.Launcher)
	if err != nil {
		return nil, fmt.Errorf("confine: launcher: %w", err)
	}
	paths := append(append([]string{}, systemPaths...), c.Paths...)
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		paths = append(paths, filepath.Dir(filepath.Dir(real))) // php-cgi's prefix (/opt/...)
	}
	if cfg.INIFile != "" {
		paths = append(paths, cfg.INIFile)
	}
	for _, kv := range cfg.INI {
		if k, v, _ := strings.Cut(kv, "="); isPathINI(strings.TrimSpace(k)) {
			paths = append(paths, iniPaths(v)...)
		}
	}
	for _, kv := range cfg.Env {
		if v, ok := strings.CutPrefix(kv, "PHP_INI_SCAN_DIR="); ok {
			paths = append(paths, iniPaths(strings.ReplaceAll(v, ":", ";"))...)
		}
	}
	return &confinement{launcher: f, paths: paths}, nil
}

func isPathINI(k string) bool {
	for _, n := range pathINI {
		if k == n {
			return true
		}
	}
	return false
}

// iniPaths are the absolute paths in an INI value: a path, or a list
// like session.save_path's "N;MODE;/path".
func iniPaths(v string) []string {
	var out []string
	for _, p := range strings.Split(strings.Trim(strings.TrimSpace(v), `"'`), ";") {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// tmpDir is the pool's private temporary directory, inside its socket
// directory.
func (s *sockets) tmpDir() string { return filepath.Join(s.dir, "tmp") }

// command is the command that starts php-cgi with args: directly, or
// through the launcher with the pool's trees and its private tmp, which
// PHP then uses for uploads, sys_get_temp_dir() and opcache's lock file,
// which it opens for reading too (php.ini's own
// settings, given later, still win).
func (p *Pool) command(args ...string) *exec.Cmd {
	c := p.confine
	if c == nil {
		cmd := exec.Command(p.bin, append(p.args[:len(p.args):len(p.args)], args...)...)
		cmd.Env = p.env
		return cmd
	}
	tmp := p.socks.tmpDir()
	php := append([]string{"-d", "sys_temp_dir=" + tmp, "-d", "upload_tmp_dir=" + tmp,
		"-d", "opcache.lockfile_path=" + tmp}, p.args...)
	rules := landlock.Rules{Paths: append(c.paths[:len(c.paths):len(c.paths)], tmp)}
	const fd = 3 // the first of ExtraFiles
	cmd := exec.Command("/proc/self/fd/3", append([]string{landlock.Subcommand},
		rules.Args(fd, p.bin, append(php, args...))...)...)
	cmd.Args[0] = "ramjet"
	cmd.ExtraFiles = []*os.File{c.launcher}
	cmd.Env = append([]string{"TMPDIR=" + tmp}, p.env...)
	return cmd
}
