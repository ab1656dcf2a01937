package wpsite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Site is one site of ramjet's configuration (a hosts[] entry) as the
// wp commands need it.
type Site struct {
	Name  string   // the first of its names
	Names []string // every name, for selecting it on the command line
	// Roots are its directories (docroot.root, htaccess_root): an
	// install in one of them, or below, is this site's.
	Roots []string
	Token string // its admin token; "" when it has none
	// TokenErr is why its token could not be read (admin_token_file).
	TokenErr error
}

// Target is an install with the site it belongs to (nil: no site).
type Target struct {
	Install
	Site *Site
	// Unmatched says why an install under a site's root was given no
	// site (nil: it was given one, or lies under none).
	Unmatched error
	// Status is the install's state as wp.php reported it, once probed.
	Status Status
}

// Match pairs each install with its site: the one with the deepest root
// holding it (a WordPress in /blog under a site's root is that site's).
// The site's token goes to the install's owner, so an install is given
// no site, and Unmatched says why, when that owner may not be the
// site's: two sites' roots are one directory, or a directory from the
// root down to the install belongs to someone else than the install's
// owner and root (an install another tenant made in a site's
// world-writable directory would get that site's token), or is root's
// and writable by all.
func Match(installs []Install, sites []Site) []Target {
	roots := siteRoots(sites)
	out := make([]Target, len(installs))
	for i, in := range installs {
		out[i].Install = in
		path := canonical(in.Path)
		var best siteRoot
		for _, r := range roots {
			switch {
			case !within(r.dir, path) || len(r.dir) < len(best.dir):
			case r.dir == best.dir && r.site != best.site:
				out[i].Unmatched = fmt.Errorf("%s: the roots of %s and %s are the same directory %s: which site's token it gets is unclear",
					in.Path, best.site.Name, r.site.Name, r.dir)
			case len(r.dir) > len(best.dir):
				best, out[i].Unmatched = r, nil
			}
		}
		if best.site == nil || out[i].Unmatched != nil {
			continue
		}
		if out[i].Unmatched = ownedAlong(best.dir, path, in.Owner); out[i].Unmatched == nil {
			out[i].Site = best.site
		} else {
			out[i].Unmatched = fmt.Errorf("%s: not given %s's token: %w", in.Path, best.site.Name, out[i].Unmatched)
		}
	}
	return out
}

// siteRoot is one of a site's roots, resolved.
type siteRoot struct {
	dir  string
	site *Site
}

func siteRoots(sites []Site) []siteRoot {
	var roots []siteRoot
	for j := range sites {
		for _, r := range sites[j].Roots {
			if r != "" {
				roots = append(roots, siteRoot{rootDir(r), &sites[j]})
			}
		}
	}
	return roots
}

// rootDir is a site's root from the config, resolved through the
// symlinks root owns (/home -> /home2 on cPanel) and no other: a
// tenant's public_html made a link to another's directory must not make
// the other's installs this site's. A root with such a link is taken as
// written, so it holds no install but those below it in fact.
func rootDir(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	done, rest, hops := "/", strings.Split(abs, "/"), 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			done = next // a missing root matches nothing anyway
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		target, err := os.Readlink(next)
		if hops++; !ok || st.Uid != 0 || err != nil || hops > 40 {
			return abs
		}
		if filepath.IsAbs(target) {
			done = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return done
}

// ownedAlong checks each directory from path up to root (both included,
// path within root, both without symlinks): each must be o's or root's,
// and root's must not be writable by all.
func ownedAlong(root, path string, o Owner) error {
	for d := path; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		switch {
		case !ok:
			return fmt.Errorf("%s: no owner", d)
		case st.Uid != o.UID && st.Uid != 0:
			return fmt.Errorf("%s belongs to uid %d, not to %s who owns the install", d, st.Uid, o.Name)
		case st.Uid != o.UID && fi.Mode().Perm()&0o002 != 0:
			return fmt.Errorf("%s is root's and writable by every user", d)
		}
		if d == root || d == filepath.Dir(d) {
			return nil
		}
	}
}

// within: p is dir or below it.
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// canonical resolves symlinks (/home -> /home2 on cPanel) where it can.
func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// Select picks targets by name: a site's name, or an install's
// directory. Names matching nothing are returned apart.
func Select(targets []Target, names []string) (picked []Target, unknown []string) {
	for _, name := range names {
		n := len(picked)
		for _, t := range targets {
			if t.Site != nil && hasName(t.Site.Names, name) || canonical(name) == canonical(t.Path) {
				picked = append(picked, t)
			}
		}
		if len(picked) == n {
			unknown = append(unknown, name)
		}
	}
	return picked, unknown
}

func hasName(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
