package landlock

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// handled is what a confined process may do only beneath its trees:
// read a file, list a directory, run a file. Everything else (writing,
// making sockets, connecting) stays as the user's permissions allow.
const handled = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_EXECUTE

// fileRights are the handled rights a rule on a single file may grant.
const fileRights = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_EXECUTE

// ErrUnsupported: the kernel has no Landlock, or it is turned off.
var ErrUnsupported = errors.New("landlock: not supported by this kernel (Linux 5.13 or later, with landlock among its LSMs)")

// ABI is the kernel's Landlock version, 0 when it has none.
func ABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// Rules are the paths a confined process may read beneath. A directory
// grants its whole tree; a file, itself. A path that does not exist, or
// that the process may not reach, is skipped: the system trees differ
// between distributions.
type Rules struct {
	Paths []string
}

// restrictThread confines the calling OS thread, and what it executes,
// to r. Landlock domains and no_new_privs belong to a thread: the caller
// holds its thread locked until it execs.
func (r Rules) restrictThread() error {
	if ABI() < 1 {
		return ErrUnsupported
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	// Only the first field: every Landlock version accepts that size.
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr.Handled_access_fs), 0)
	if errno != 0 {
		return fmt.Errorf("landlock: create ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	for _, p := range r.Paths {
		if err := addPath(int(fd), p); err != nil {
			return err
		}
	}
	// Required unless the thread holds CAP_SYS_ADMIN; ramjet's unit sets
	// it for the whole service anyway.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("landlock: no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: restrict self: %w", errno)
	}
	return nil
}

// addPath grants path's tree (or the file) to the ruleset fd.
func addPath(fd int, path string) error {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
		// What the process cannot reach it could not read anyway:
		// leaving the rule out grants nothing it would have had.
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock: open %s: %w", path, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("landlock: stat %s: %w", path, err)
	}
	rights := uint64(handled)
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights = fileRights
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(pfd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: allow %s: %w", path, errno)
	}
	return nil
}

// Exec confines the process to r and replaces it with prog (argv, env).
// It returns only on failure.
func (r Rules) Exec(prog string, argv, env []string) error {
	runtime.LockOSThread() // never unlocked: the thread execs or the process exits
	if err := r.restrictThread(); err != nil {
		return err
	}
	if err := unix.Exec(prog, argv, env); err != nil {
		return fmt.Errorf("landlock: exec %s: %w", prog, err)
	}
	return nil
}
