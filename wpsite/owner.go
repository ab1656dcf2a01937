package wpsite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// Errors of who runs PHP inside an install, for errors.Is.
var (
	// ErrRootOwned: the install belongs to root; ramjet never runs a
	// site's PHP as root.
	ErrRootOwned = errors.New("owned by root: ramjet wp runs WordPress as the install's owner, never as root")
	// ErrNotOwner: ramjet is neither root nor the owner, so it cannot
	// become the owner.
	ErrNotOwner = errors.New("run ramjet wp as root or as the install's owner")
)

// Owner is the user an install belongs to, as su would make them: the
// directory's uid with that user's primary group and groups.
type Owner struct {
	UID, GID uint32
	Groups   []uint32
	Name     string // user name, or the uid when it has no passwd entry
	Home     string // home directory, or "" when unknown
}

// ownerOf reads who owns dir (fi is its Stat). A uid without a passwd
// entry keeps the directory's gid and no other group.
func ownerOf(dir string, fi fs.FileInfo) (Owner, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Owner{}, fmt.Errorf("%s: no owner", dir)
	}
	o := Owner{UID: st.Uid, GID: st.Gid, Name: strconv.FormatUint(uint64(st.Uid), 10), Groups: []uint32{}}
	u, err := user.LookupId(o.Name)
	if err != nil {
		return o, nil
	}
	o.Name, o.Home = u.Username, u.HomeDir
	if gid, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
		o.GID = uint32(gid)
	}
	gids, err := u.GroupIds()
	if err != nil {
		return o, nil // the primary group alone
	}
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			o.Groups = append(o.Groups, uint32(n))
		}
	}
	return o, nil
}

// credential is what a child runs with to act as o: nil when this process
// is o already.
func (o Owner) credential() (*syscall.Credential, error) {
	if o.UID == 0 {
		return nil, ErrRootOwned
	}
	switch euid := os.Geteuid(); {
	case euid == int(o.UID):
		return nil, nil
	case euid != 0:
		return nil, fmt.Errorf("%w (%s)", ErrNotOwner, o.Name)
	}
	return &syscall.Credential{Uid: o.UID, Gid: o.GID, Groups: o.Groups}, nil
}
