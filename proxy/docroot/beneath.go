package docroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// rootDir opens files beneath a docroot with the kernel's help, so that
// what a path resolves to is decided at the open itself: a directory
// swapped for a symlink between a check and the open (a tenant's
// `mv d d.real; ln -s /etc d`) cannot lead outside. openat2 with
// RESOLVE_BENEATH follows a symlink only while it stays beneath the
// root (an absolute one never does: see resolved); where the kernel has
// no openat2 (before 5.6, or a seccomp filter that refuses it) the
// standard library's os.Root walks the path from the same directory one
// component at a time with O_NOFOLLOW, to the same effect.
type rootDir struct {
	path string   // the docroot, absolute, symlinks resolved
	dir  *os.File // opened once: the anchor of every open beneath it
	fsys *os.Root // nil when openat2 is used

	closeOnce sync.Once
	closeErr  error
}

// openat2Works probes once whether the kernel has openat2.
var openat2Works = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH})
	if err == nil {
		unix.Close(fd)
	}
	return !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM)
})

// openRootDir opens the docroot path (absolute, symlinks resolved);
// walk forces the component walk even where openat2 exists.
func openRootDir(path string, walk bool) (*rootDir, error) {
	r := &rootDir{path: path}
	if walk || !openat2Works() {
		fsys, err := os.OpenRoot(path)
		if err != nil {
			return nil, fmt.Errorf("docroot: %w", err)
		}
		r.fsys = fsys
		return r.check()
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("docroot: open %s: %w", path, err)
	}
	r.dir = os.NewFile(uintptr(fd), path)
	return r.check()
}

// check resolves the root itself as every request will, so that a
// system where that cannot work (no /proc to read an open file's path
// from) is an error of the configuration, not a 403 for every request.
func (r *rootDir) check() (*rootDir, error) {
	if _, _, err := r.stat("."); err != nil {
		_ = r.close() // the error to report is the check's
		return nil, fmt.Errorf("docroot: %s: %w", r.path, err)
	}
	return r, nil
}

// close releases the directory; opens after it fail.
func (r *rootDir) close() error {
	r.closeOnce.Do(func() {
		if r.fsys != nil {
			r.closeErr = r.fsys.Close()
		} else {
			r.closeErr = r.dir.Close()
		}
	})
	return r.closeErr
}

// resolveFlags: symlinks only beneath the root; no /proc magic links.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// openat2 opens rel beneath the directory. The directory's descriptor is
// held (Control) for the call, so a concurrent close cannot hand its
// number to another file. EAGAIN (a rename raced the lookup of "..") is
// retried a few times. With O_PATH openat2 takes no other flag.
func (r *rootDir) openat2(rel string, flags int) (int, error) {
	conn, err := r.dir.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, oerr := -1, error(nil)
	cerr := conn.Control(func(dirfd uintptr) {
		how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolveFlags}
		for range 8 {
			fd, oerr = unix.Openat2(int(dirfd), rel, &how)
			if oerr != unix.EAGAIN && oerr != unix.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		return -1, cerr
	}
	return fd, oerr
}

// open opens rel (slash-separated, relative to the root; "." is the
// root) for reading, never blocking on a FIFO; the caller checks what
// it opened.
func (r *rootDir) open(rel string) (*os.File, error) {
	f, err := r.openOnce(rel)
	if again, ok := r.resolved(rel, err); ok {
		return r.openOnce(again)
	}
	return f, err
}

func (r *rootDir) openOnce(rel string) (*os.File, error) {
	const flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY
	if r.fsys != nil {
		return r.fsys.OpenFile(rel, flags, 0)
	}
	fd, err := r.openat2(rel, flags)
	if err != nil {
		return nil, &fs.PathError{Op: "openat2", Path: rel, Err: err}
	}
	// Blocking again, as os.Open's files are (a regular file does not
	// block; other kinds are refused by the caller).
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: rel, Err: err}
	}
	return os.NewFile(uintptr(fd), r.path+"/"+rel), nil
}

// stat resolves rel beneath the root: the file's real path (read back
// from the opened descriptor) and its FileInfo.
func (r *rootDir) stat(rel string) (string, fs.FileInfo, error) {
	real, info, err := r.statOnce(rel)
	if again, ok := r.resolved(rel, err); ok {
		return r.statOnce(again)
	}
	return real, info, err
}

func (r *rootDir) statOnce(rel string) (string, fs.FileInfo, error) {
	var f *os.File
	if r.fsys != nil {
		var err error
		if f, err = r.fsys.OpenFile(rel, unix.O_RDONLY|unix.O_NONBLOCK, 0); err != nil {
			return "", nil, err
		}
	} else {
		fd, err := r.openat2(rel, unix.O_PATH)
		if err != nil {
			return "", nil, &fs.PathError{Op: "openat2", Path: rel, Err: err}
		}
		f = os.NewFile(uintptr(fd), rel)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	real, err := fdPath(f)
	if err != nil {
		return "", nil, err
	}
	if !within(real, r.path) {
		// The root itself moved (renamed by its owner): what is beneath
		// the descriptor is no longer under the path PHP is told.
		return "", nil, &fs.PathError{Op: "stat", Path: rel, Err: errOutside}
	}
	return real, info, nil
}

// resolved is where a path the kernel refused is tried once more:
// RESOLVE_BENEATH (and os.Root) refuse every absolute symlink, also one
// pointing inside the docroot, as sites have them. The path with its
// symlinks resolved, when it lies inside the root, is opened beneath it
// again — so what it names is still confined at the open, whatever
// changed since it was resolved.
func (r *rootDir) resolved(rel string, err error) (string, bool) {
	if err == nil || notFound(err) {
		return "", false
	}
	real, eerr := filepath.EvalSymlinks(filepath.Join(r.path, rel))
	if eerr != nil || !within(real, r.path) {
		return "", false
	}
	again := relative(strings.TrimPrefix(real, r.path))
	return again, again != rel
}

// errOutside: a file's real path is not under the docroot's.
var errOutside = errors.New("not under the document root")

// fdPath is the path the kernel has for an open file.
func fdPath(f *os.File) (string, error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	var p string
	cerr := conn.Control(func(fd uintptr) {
		p, err = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
	})
	if cerr != nil {
		return "", cerr
	}
	if err != nil {
		return "", fmt.Errorf("docroot: the path of an open file (is /proc mounted?): %w", err)
	}
	return p, nil
}

// notFound: errors that mean nothing is there (404); every other error
// of an open beneath the root — a symlink leading out (EXDEV), a path
// escaping it, no permission — refuses (403).
func notFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)
}

// scriptStillThere resolves a script's file beneath the root again just
// before PHP is asked to run it: the lookup may be a second old, and
// php-cgi opens SCRIPT_FILENAME by its path itself. The file must still
// be a regular file at the same real path, inside the root. What is left
// is the moment between this check and php-cgi's own open (README,
// "Docroot mode").
func (h *Handler) scriptStillThere(t *target) bool {
	if h.cfg.FollowSymlinks {
		return true // the site lets scripts lead anywhere
	}
	return h.dir.regularAt(h.relativeFile(t.file), t.file)
}

// regularAt reports whether rel opens, beneath the root, as the regular
// file whose real path is real: stat's check on raw descriptors, as it
// runs before every script.
func (r *rootDir) regularAt(rel, real string) bool {
	if r.fsys != nil {
		p, info, err := r.stat(rel)
		return err == nil && p == real && info.Mode().IsRegular()
	}
	fd, err := r.openat2(rel, unix.O_PATH)
	if again, ok := r.resolved(rel, err); ok {
		fd, err = r.openat2(again, unix.O_PATH)
	}
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	buf := make([]byte, len(real)+1) // a longer path does not fit, and differs
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf)
	return err == nil && string(buf[:n]) == real
}
