package docroot

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// kind is what a request path resolves to.
type kind int

const (
	kindNotFound  kind = iota // 404
	kindForbidden             // 403: dotfiles, paths escaping the docroot
	kindBadPath               // 400: a path no file can have
	kindStatic                // a regular file
	kindPHP                   // a script for the pool
	kindRedirect              // 301 to the directory with its slash
	kindFallback              // the origin's (PHPOnly mode)
)

// target is a resolved request path.
type target struct {
	kind       kind
	file       string      // absolute, symlinks resolved
	info       fs.FileInfo // of file
	scriptName string      // URL path of the script (SCRIPT_NAME)
	pathInfo   string      // PATH_INFO
	location   string      // redirect target path
	// url is the URL path served when it is not the one requested: a
	// directory's index, the front controller ("" otherwise).
	url string
}

// resolve maps a decoded URL path to what serves it. fasthttp has already
// removed "." and ".." segments; resolve refuses any that remain.
func (h *Handler) resolve(path string) target { return h.resolveIndex(path, h.cfg.Index) }

// resolveIndex is resolve with the index names a .htaccess DirectoryIndex
// may have set.
func (h *Handler) resolveIndex(path string, index []string) target {
	if !strings.HasPrefix(path, "/") || strings.ContainsRune(path, 0) || strings.ContainsRune(path, '\\') {
		return target{kind: kindBadPath}
	}
	if k := checkSegments(path); k != kindStatic {
		return target{kind: k}
	}
	if script, info, ok := h.splitScript(path); ok {
		if h.php == nil {
			return target{kind: kindForbidden} // never serve a script's source
		}
		return h.script(script, info)
	}
	if h.cfg.PHPOnly {
		return target{kind: kindFallback}
	}
	return h.file(path, index)
}

// checkSegments refuses "..", "." and dotfiles (".env", ".git/…",
// ".htaccess"); /.well-known/ stays reachable.
func checkSegments(path string) kind {
	for seg := range strings.SplitSeq(path[1:], "/") {
		switch {
		case seg == "." || seg == "..":
			return kindBadPath
		case strings.HasPrefix(seg, ".") && seg != ".well-known":
			return kindForbidden
		}
	}
	return kindStatic
}

// splitScript finds the script in a path: one ending in ".php", or with
// PathInfo the first segment ending in ".php" followed by more path.
func (h *Handler) splitScript(path string) (script, info string, ok bool) {
	if strings.HasSuffix(path, ".php") {
		return path, "", true
	}
	if !h.cfg.PathInfo {
		return "", "", false
	}
	i := strings.Index(path, ".php/")
	if i < 0 {
		return "", "", false
	}
	return path[:i+4], path[i+4:], true
}

// script resolves a script path: it runs only if it is an existing
// regular file inside the docroot.
func (h *Handler) script(name, pathInfo string) target {
	file, info, k := h.confine(name)
	if k != kindStatic {
		return target{kind: k}
	}
	if !info.Mode().IsRegular() {
		return target{kind: kindNotFound}
	}
	return target{kind: kindPHP, file: file, info: info, scriptName: name, pathInfo: pathInfo}
}

// file resolves a non-script path like try_files $uri $uri/ FRONT?$args.
func (h *Handler) file(path string, index []string) target {
	file, info, k := h.confine(path)
	switch {
	case k == kindForbidden || k == kindBadPath:
		return target{kind: k}
	case k == kindStatic && info.Mode().IsRegular():
		if strings.HasSuffix(path, "/") {
			return h.front(kindNotFound) // "/file.html/"
		}
		return target{kind: kindStatic, file: file, info: info}
	case k == kindStatic && info.IsDir():
		if !strings.HasSuffix(path, "/") {
			return target{kind: kindRedirect, location: path + "/"}
		}
		if t, ok := h.index(path, index); ok {
			return t
		}
		return h.front(kindForbidden)
	}
	return h.front(kindNotFound)
}

// index tries the index names in a directory.
func (h *Handler) index(dir string, names []string) (target, bool) {
	for _, name := range names {
		p := dir + name
		if strings.HasSuffix(name, ".php") {
			if h.php == nil {
				continue
			}
			if t := h.script(p, ""); t.kind == kindPHP {
				t.url = p
				return t, true
			}
			continue
		}
		file, info, k := h.confine(p)
		if k == kindStatic && info.Mode().IsRegular() {
			return target{kind: kindStatic, file: file, info: info, url: p}, true
		}
	}
	return target{}, false
}

// front hands a path no file answers to the front controller, or
// answers otherwise.
func (h *Handler) front(otherwise kind) target {
	if h.cfg.FrontController == "" || h.php == nil {
		return target{kind: otherwise}
	}
	t := h.script(h.cfg.FrontController, "")
	if t.kind == kindPHP {
		t.url = h.cfg.FrontController
	}
	return t
}

// confine returns the file a URL path names, with symlinks resolved, and
// kindStatic when it exists inside the docroot; kindForbidden when it (or
// a symlink on the way) leads outside and FollowSymlinks is off. What it
// finds is remembered for a second (lookups): serving opens the file
// again beneath the root (openStatic, scriptStillThere), never by this
// name alone.
func (h *Handler) confine(urlPath string) (string, fs.FileInfo, kind) {
	full := filepath.Join(h.root, filepath.FromSlash(urlPath))
	if !within(full, h.root) {
		return "", nil, kindForbidden
	}
	if h.cfg.FollowSymlinks {
		info, err := os.Stat(full)
		if err != nil {
			return "", nil, kindNotFound
		}
		return full, info, kindStatic
	}
	real, info, err := h.dir.stat(relative(urlPath))
	switch {
	case err == nil:
		return real, info, kindStatic
	case notFound(err):
		return "", nil, kindNotFound
	}
	return "", nil, kindForbidden
}

// relative is a URL path ("/a/b", checked by checkSegments) as a path
// beneath the root ("a/b"; "." for the root).
func relative(urlPath string) string {
	rel := strings.Trim(urlPath, "/")
	if rel == "" {
		return "."
	}
	return rel
}

// relativeFile is a real path under the root as a path beneath it.
func (h *Handler) relativeFile(file string) string {
	return relative(strings.TrimPrefix(file, h.realRoot))
}

// within reports whether path is root or below it.
func within(path, root string) bool {
	if path == root {
		return true
	}
	if root == string(filepath.Separator) {
		return strings.HasPrefix(path, root)
	}
	return strings.HasPrefix(path, root) && path[len(root)] == filepath.Separator
}
