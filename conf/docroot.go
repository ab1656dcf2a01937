package conf

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// validate checks a site's docroot block under path; for a host it is
// skipped when equal to base (reported under "defaults" already).
func (d *Docroot) validate(p *problems, path string, base *Docroot) {
	if base != nil && reflect.DeepEqual(d, base) {
		return
	}
	path += ".docroot"
	if d.Root != "" {
		if !filepath.IsAbs(d.Root) {
			p.add(path+".root", fmt.Sprintf("%q must be an absolute path", d.Root))
		} else if st, err := os.Stat(d.Root); err != nil {
			p.add(path+".root", err.Error())
		} else if !st.IsDir() {
			p.add(path+".root", fmt.Sprintf("%q is not a directory", d.Root))
		}
	}
	p.oneOf(path+".serve", d.Serve, "all", "php")
	for i, name := range d.Index {
		if name == "" || strings.ContainsAny(name, "/\\\x00") || strings.HasPrefix(name, ".") {
			p.add(path+".index["+strconv.Itoa(i)+"]", fmt.Sprintf("%q must be a plain file name", name))
		}
	}
	if f := d.FrontController; f != "" && (!strings.HasPrefix(f, "/") || !strings.HasSuffix(f, ".php") ||
		strings.Contains(f, "/.") || strings.ContainsAny(f, "\\\x00?#")) {
		p.add(path+".front_controller", fmt.Sprintf("%q must be a URL path of a .php script, like /index.php", f))
	}
	p.nonNegative(path+".static_ttl", d.StaticTTL)

	d.PHP.validate(p, path+".php")
}

func (h *PHP) validate(p *problems, path string) {
	p.oneOf(path+".engine", h.Engine, "shared", "separate")
	p.oneOf(path+".confine", h.Confine, "auto", "on", "off")
	for i, rp := range h.ReadPaths {
		if !filepath.IsAbs(rp) {
			p.add(path+".read_paths["+strconv.Itoa(i)+"]", fmt.Sprintf("%q must be an absolute path", rp))
		}
	}
	if f := h.INIFile; f != "" {
		if !filepath.IsAbs(f) {
			p.add(path+".ini_file", fmt.Sprintf("%q must be an absolute path", f))
		} else if st, err := os.Stat(f); err != nil {
			p.add(path+".ini_file", err.Error())
		} else if !st.Mode().IsRegular() {
			p.add(path+".ini_file", fmt.Sprintf("%q is not a regular file", f))
		}
	}
	p.minInt(path+".workers", h.Workers, 1)
	if h.MinWorkers < 0 || h.MinWorkers > h.Workers {
		p.add(path+".min_workers", fmt.Sprintf("must be between 0 and workers (%d), got %d", h.Workers, h.MinWorkers))
	}
	p.minInt(path+".max_requests", h.MaxRequests, 1)
	p.nonNegative(path+".idle_suspend", h.IdleSuspend)
	p.nonNegative(path+".idle_exit", h.IdleExit)
	p.positive(path+".queue_wait", h.QueueWait)
	p.nonNegative(path+".request_timeout", h.RequestTimeout)
	p.nonNegative(path+".slow_request", h.SlowRequest)
	for i, kv := range h.Env {
		if name, _, _ := strings.Cut(kv, "="); !isEnvName(name) {
			p.add(path+".env["+strconv.Itoa(i)+"]", fmt.Sprintf("%q is not NAME=value, nor NAME (passed from ramjet's environment)", kv))
		}
	}
	for i, kv := range h.INI {
		if key, _, ok := strings.Cut(kv, "="); !ok || key == "" || strings.ContainsFunc(key, isSpaceOrCtl) || strings.ContainsAny(kv, "\n\r\x00") {
			p.add(path+".ini["+strconv.Itoa(i)+"]", fmt.Sprintf("%q is not key=value", kv))
		}
	}
}

// isEnvName: a letter or "_", then letters, digits and "_".
func isEnvName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
