package phppool

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"
	"syscall"
)

// Credential errors, for errors.Is.
var (
	// errRootWorker: the configured user or group is root.
	errRootWorker = errors.New("php workers must not run as root")
	// ErrOwnUser: the configured user or group is ramjet's own: PHP could
	// read ramjet's config (its tokens), write its logs and signal it.
	ErrOwnUser = errors.New("php workers must not run as ramjet's own user or group")
	// ErrCannotSwitch: ramjet is neither root nor holds CAP_SETUID and
	// CAP_SETGID, so it cannot start workers as another user.
	ErrCannotSwitch = errors.New("starting php workers as another user needs root or CAP_SETUID and CAP_SETGID (the packaged unit grants them)")
)

// identity is who ramjet runs as, and whether it may switch users.
type identity struct {
	euid, egid int
	canSwitch  bool // root, or CAP_SETUID and CAP_SETGID effective
}

// workerCredential returns who workers run as: User (default "nobody")
// with Group (default the user's primary group) and no supplementary
// groups, so PHP never holds root's or ramjet's. It is never root and
// never ramjet's own user or group, and it needs ramjet to be able to
// switch to it (root, or the capabilities the packaged unit grants).
func workerCredential(userName, groupName string, id identity) (*syscall.Credential, error) {
	if userName == "" {
		userName = "nobody"
	}
	u, err := lookupUser(userName)
	if err != nil {
		return nil, fmt.Errorf("worker user: %w", err)
	}
	gid := u.Gid
	if groupName != "" {
		g, err := lookupGroup(groupName)
		if err != nil {
			return nil, fmt.Errorf("worker group: %w", err)
		}
		gid = g.Gid
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("worker user %q: uid %q: %w", userName, u.Uid, err)
	}
	g, err := strconv.ParseUint(gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("worker group %q: gid %q: %w", groupName, gid, err)
	}
	switch {
	case uid == 0 || g == 0:
		return nil, fmt.Errorf("user %q (uid %d), gid %d: %w", userName, uid, g, errRootWorker)
	case int(uid) == id.euid || int(g) == id.egid:
		return nil, fmt.Errorf("user %q (uid %d), gid %d; ramjet runs as uid %d, gid %d: %w",
			userName, uid, g, id.euid, id.egid, ErrOwnUser)
	case !id.canSwitch:
		return nil, fmt.Errorf("user %q: %w", userName, ErrCannotSwitch)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(g), Groups: []uint32{}}, nil
}

// lookupUser finds a user by name, or by number if no name matches.
func lookupUser(name string) (*user.User, error) {
	u, err := user.Lookup(name)
	if err == nil {
		return u, nil
	}
	if _, nerr := strconv.ParseUint(name, 10, 32); nerr == nil {
		if u, iderr := user.LookupId(name); iderr == nil {
			return u, nil
		}
	}
	return nil, err
}

// lookupGroup finds a group by name, or by number if no name matches.
func lookupGroup(name string) (*user.Group, error) {
	g, err := user.LookupGroup(name)
	if err == nil {
		return g, nil
	}
	if _, nerr := strconv.ParseUint(name, 10, 32); nerr == nil {
		if g, iderr := user.LookupGroupId(name); iderr == nil {
			return g, nil
		}
	}
	return nil, err
}
