package wpsite

import (
	"path/filepath"
	"strings"
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
	// Status is the install's state as wp.php reported it, once probed.
	Status Status
}

// Match pairs each install with its site: the one with the deepest root
// holding it (a WordPress in /blog under a site's root is that site's).
func Match(installs []Install, sites []Site) []Target {
	out := make([]Target, len(installs))
	for i, in := range installs {
		out[i].Install = in
		path, best := canonical(in.Path), -1
		for j := range sites {
			for _, r := range sites[j].Roots {
				if r = canonical(r); within(r, path) && len(r) > best {
					best, out[i].Site = len(r), &sites[j]
				}
			}
		}
	}
	return out
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
