package conf

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
)

// phpIdentity is who a docroot site's PHP runs as.
type phpIdentity struct {
	uid, gid int
}

// validateUser checks who the site's PHP runs as (path is the php
// block's): a user and group that exist, are not root, and are not the
// ones ramjet runs as — PHP as ramjet could read this file's tokens,
// write its access logs and signal it. ramjet check runs as the
// service's user (the unit's ExecStartPre), and so does serve.
func (h *PHP) validateUser(p *problems, path string) (phpIdentity, bool) {
	if h.User == "" {
		p.add(path+".user", "must name the user this site's PHP runs as (a user of its own; see docs/install.md, \"Docroot mode under this unit\")")
		return phpIdentity{}, false
	}
	u, err := findUser(h.User)
	if err != nil {
		p.add(path+".user", err.Error())
		return phpIdentity{}, false
	}
	id := phpIdentity{uid: u.uid, gid: u.gid}
	if h.Group != "" {
		if id.gid, err = findGroup(h.Group); err != nil {
			p.add(path+".group", err.Error())
			return phpIdentity{}, false
		}
	}
	euid, egid := os.Geteuid(), os.Getegid()
	switch {
	case id.uid == 0:
		p.add(path+".user", fmt.Sprintf("%q is root: PHP never runs as root", h.User))
	case id.gid == 0:
		p.add(path+".group", "gid 0 (root's group): PHP never runs in it")
	case id.uid == euid:
		p.add(path+".user", fmt.Sprintf("%q (uid %d) is the user ramjet runs as: its PHP could read ramjet's config and tokens, write its logs and signal it; give the site a user of its own", h.User, id.uid))
	case id.gid == egid:
		p.add(path+".group", fmt.Sprintf("gid %d is the group ramjet runs as, which may read ramjet's config and tokens; give the site a group of its own", id.gid))
	default:
		return id, true
	}
	return phpIdentity{}, false
}

// account is a user's uid and primary gid.
type account struct{ uid, gid int }

// findUser looks a user up by name, or by uid when it is a number.
func findUser(name string) (account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, nerr := strconv.Atoi(name); nerr != nil {
			return account{}, fmt.Errorf("no user %q on this system", name)
		}
		if u, err = user.LookupId(name); err != nil {
			return account{}, fmt.Errorf("no user with uid %s on this system", name)
		}
	}
	uid, uerr := strconv.Atoi(u.Uid)
	gid, gerr := strconv.Atoi(u.Gid)
	if uerr != nil || gerr != nil {
		return account{}, fmt.Errorf("user %q has uid %q, gid %q: not numbers", name, u.Uid, u.Gid)
	}
	return account{uid: uid, gid: gid}, nil
}

// findGroup looks a group up by name, or by gid when it is a number.
func findGroup(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		if _, nerr := strconv.Atoi(name); nerr != nil {
			return 0, fmt.Errorf("no group %q on this system", name)
		}
		if g, err = user.LookupGroupId(name); err != nil {
			return 0, fmt.Errorf("no group with gid %s on this system", name)
		}
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return 0, fmt.Errorf("group %q has gid %q: not a number", name, g.Gid)
	}
	return gid, nil
}

// validatePHPSites checks who each docroot site's PHP runs as, then that
// no two sites share a user unasked. A host's user that is the
// defaults' is reported under defaults only, when that is a docroot site.
func (c *Config) validatePHPSites(p *problems) {
	var sites []phpSite
	base := &c.Defaults.Docroot
	if base.Root != "" {
		if id, ok := base.PHP.validateUser(p, "defaults.docroot.php"); ok {
			sites = append(sites, phpSite{path: "defaults", d: base, id: id})
		}
	}
	for i := range c.Hosts {
		d := &c.Hosts[i].Docroot
		if d.Root == "" {
			continue
		}
		path := "hosts[" + strconv.Itoa(i) + "]"
		report := p
		if base.Root != "" && d.PHP.User == base.PHP.User && d.PHP.Group == base.PHP.Group {
			report = &problems{} // the defaults' problem, reported once
		}
		if id, ok := d.PHP.validateUser(report, path+".docroot.php"); ok {
			sites = append(sites, phpSite{path: path, d: d, id: id})
		}
	}
	c.validatePHPUsers(p, sites)
}

// phpSite is a docroot site as the shared-user check sees it.
type phpSite struct {
	path string // "defaults" or "hosts[i]"
	d    *Docroot
	id   phpIdentity
}

// validatePHPUsers refuses two docroot sites with different roots whose
// PHP runs as the same user, unless both say php.shared_user: each
// site's PHP could read (and write) the other's files, its config and
// sessions. Sites sharing a root are one site under several names.
func (c *Config) validatePHPUsers(p *problems, sites []phpSite) {
	byUID := map[int][]phpSite{}
	for _, s := range sites {
		byUID[s.id.uid] = append(byUID[s.id.uid], s)
	}
	for _, s := range sites {
		if s.d.PHP.SharedUser {
			continue
		}
		for _, o := range byUID[s.id.uid] {
			if o.d.Root == s.d.Root {
				continue
			}
			p.add(s.path+".docroot.php.user", fmt.Sprintf(
				"%q also runs the PHP of %s (root %s): either site's PHP could read the other's files; give each site a user of its own, or set php.shared_user: true on both",
				s.d.PHP.User, o.path, o.d.Root))
			break
		}
	}
}
