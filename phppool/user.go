package phppool

import (
	"errors"
	"fmt"
	"log/slog"
	"os/user"
	"strconv"
	"syscall"
)

// errRootWorker: the configured user or group is root.
var errRootWorker = errors.New("php workers must not run as root")

// workerCredential returns who workers run as. Unless ramjet runs as root
// (euid 0) that is ramjet's own user (nil); a User naming someone else is
// only logged, as php-fpm does, since switching needs root. As root it is
// User (default "nobody") with Group (default the user's primary group)
// and no supplementary groups, so PHP never holds root's.
func workerCredential(userName, groupName string, euid int, log *slog.Logger) (*syscall.Credential, error) {
	if euid != 0 {
		if userName != "" {
			if u, err := lookupUser(userName); err != nil || u.Uid != strconv.Itoa(euid) {
				log.Warn("not running as root: php workers run as ramjet's user, not the configured one",
					"user", userName, "euid", euid)
			}
		}
		return nil, nil
	}
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
	if uid == 0 || g == 0 {
		return nil, fmt.Errorf("user %q (uid %d), gid %d: %w", userName, uid, g, errRootWorker)
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
