package htaccess

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Problems of a tree, as CheckTree reports them.
type Problems struct {
	// Errors make requests under their directory answer 500 (403 for an
	// unreadable file), each "FILE:LINE: message".
	Errors []string
	// Closed are access rules ramjet cannot evaluate: requests under
	// them answer 403.
	Closed []string
	// Unknown are rewrite rules reading a variable ramjet does not
	// know: they fail closed (not applied, the request not cached; an
	// [F] or [G] rule refuses).
	Unknown []string
	// Warnings are directives ignored.
	Warnings []string
	// Files is how many files were read.
	Files int
}

// CheckTree reads every file named name (".htaccess" if "") under root
// as a docroot site would, and lists every problem.
func CheckTree(root, name string) (Problems, error) {
	if name == "" {
		name = ".htaccess"
	}
	var p Problems
	engine := map[string]bool{} // a directory's rewrite engine, as its files left it
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			p.Errors = append(p.Errors, fmt.Sprintf("%s: %v", path, err))
			return nil
		}
		if d.IsDir() || d.Name() != name {
			return nil
		}
		p.Files++
		src, err := os.ReadFile(path)
		if err != nil {
			p.Errors = append(p.Errors, fmt.Sprintf("%s: %v", path, err))
			return nil
		}
		f := Parse(path, src, false)
		for _, e := range f.Errs {
			p.Errors = append(p.Errors, e.Error())
		}
		p.Closed = append(p.Closed, f.FailClosed()...)
		p.Unknown = append(p.Unknown, f.Unknown...)
		p.Errors = append(p.Errors, f.missingUserFiles()...)
		p.Warnings = append(p.Warnings, f.Warnings...)
		if w := f.idleLiteSpeedRules(filepath.Dir(path), engine); w != "" {
			p.Warnings = append(p.Warnings, w)
		}
		return nil
	})
	return p, err
}

// idleLiteSpeedRules warns when f's rules inside <IfModule LiteSpeed>
// never run: the rewrite engine is off for its directory (not turned on
// in the file, nor in a parent's, whose state a directory inherits), as
// LiteSpeed, Apache and ramjet read it. engine holds the state of the
// directories read so far (WalkDir reads a directory's .htaccess before
// its subdirectories'); f's is added.
func (f *File) idleLiteSpeedRules(dir string, engine map[string]bool) string {
	on := false
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if v, ok := engine[d]; ok {
			on = v
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if rc := f.top.rewrite; rc != nil && rc.engineSet {
		on = rc.engine
	}
	engine[dir] = on
	if on || f.top.rewrite == nil {
		return ""
	}
	for _, r := range f.top.rewrite.rules {
		if r.litespeed {
			return fmt.Sprintf("%s: the rules inside <IfModule LiteSpeed> never run (from %s): RewriteEngine is not on for this directory; add RewriteEngine on to the file",
				f.Path, r.at)
		}
	}
	return ""
}

// FailClosed lists the access rules of f that ramjet cannot evaluate,
// each "FILE:LINE: why".
func (f *File) FailClosed() []string {
	var out []string
	add := func(s *section) {
		for _, why := range []string{accessWhy(s.access), authzWhy(s.authz), authWhy(s.auth)} {
			if why != "" {
				out = append(out, why)
			}
		}
	}
	add(&f.top)
	for _, s := range f.files {
		add(s)
	}
	return out
}

func accessWhy(a *accessConf) string {
	if a == nil {
		return ""
	}
	return a.failClosed
}

func authzWhy(a *authzConf) string {
	if a == nil {
		return ""
	}
	return a.failClosed
}

func authWhy(a *authConf) string {
	if a == nil {
		return ""
	}
	return a.failClosed
}

// missingUserFiles lists AuthUserFile names that cannot be read: every
// login under them would fail.
func (f *File) missingUserFiles() []string {
	var out []string
	check := func(s *section) {
		if s.auth == nil || !s.auth.fileSet {
			return
		}
		if _, err := os.Stat(s.auth.userFile); err != nil {
			out = append(out, fmt.Sprintf("%s: AuthUserFile: %v", f.Path, err))
		}
	}
	check(&f.top)
	for _, s := range f.files {
		check(s)
	}
	return out
}
