package phppool

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// A non-root ramjet switches the workers' user with capabilities its
// unit grants as ambient ones (CAP_SETUID, CAP_SETGID, ...). A change
// between two non-zero uids keeps capabilities, and the ambient ones
// survive execve: php-cgi would hold CAP_SETUID, so PHP could make itself
// root. Workers are therefore started from a thread that holds no
// inheritable capabilities, which empties its ambient set too: php-cgi,
// a file without capabilities, then gets none. Capabilities are per
// thread, and the fork happens on the thread of the goroutine that
// calls Start.

// startWithoutCaps starts cmd from a thread without inheritable or
// ambient capabilities. The thread keeps its effective ones.
func startWithoutCaps(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := dropInheritable(); err != nil {
		return fmt.Errorf("phppool: drop capabilities before starting php-cgi: %w", err)
	}
	return cmd.Start()
}

// dropInheritable clears the calling thread's inheritable and ambient
// capability sets.
func dropInheritable() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	if data[0].Inheritable != 0 || data[1].Inheritable != 0 {
		data[0].Inheritable, data[1].Inheritable = 0, 0
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return err
		}
	}
	// Empty already (no inheritable capability can be ambient); cleared
	// anyway in case a kernel differs. EINVAL: no ambient sets (< 4.3).
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return nil
}

// canSwitchUser reports whether ramjet may start processes as another
// user: root, or CAP_SETUID and CAP_SETGID effective.
func canSwitchUser(euid int) bool {
	if euid == 0 {
		return true
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	const want = 1<<unix.CAP_SETUID | 1<<unix.CAP_SETGID
	return data[0].Effective&want == want
}
