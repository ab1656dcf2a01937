package conf

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// AccessLog is where and how client requests are logged: at the top
// level for every site, per host for its names. "access_log: off" in
// the file is Path "": so a host under a top-level "off" that names a
// file logs to it, in the format it names or the top level's.
type AccessLog struct {
	// Path is an absolute file name (appended to, created if missing;
	// its directory must exist when ramjet starts or reloads), or
	// "stdout"; "" logs nothing.
	Path string `yaml:"path"`
	// Format is "combined" (Apache's and nginx's; "" means it too),
	// "ramjet" (combined followed by the cache status, request time,
	// origin time and site), "json" (one object per line) or "off".
	Format string `yaml:"format"`
}

// AccessLogStdout as a path writes the lines to standard output.
const AccessLogStdout = "stdout"

// On reports whether lines are written.
func (a AccessLog) On() bool { return a.Path != "" && a.Format != "off" }

func (a *AccessLog) validate(p *problems, path string) {
	if a.Format != "" {
		p.oneOf(path+".format", a.Format, "combined", "ramjet", "json", "off")
	}
	switch f := a.Path; {
	case f == "" || f == AccessLogStdout:
	case !filepath.IsAbs(f):
		p.add(path+".path", fmt.Sprintf("%q must be an absolute path, or %q", f, AccessLogStdout))
	case strings.HasSuffix(f, "/") || strings.ContainsAny(f, "\x00\n"):
		p.add(path+".path", fmt.Sprintf("%q is not a file name", f))
	}
}

// validateAccessLogs checks the top-level access log and each host's,
// and that the sites writing one file write it in one format (a file of
// mixed formats is one no parser reads).
func (c *Config) validateAccessLogs(p *problems) {
	c.AccessLog.validate(p, "access_log")
	formats := map[string]string{} // path -> "format (where set)"
	note := func(a AccessLog, where string) {
		if !a.On() {
			return
		}
		f := cmp.Or(a.Format, "combined")
		if first, ok := formats[a.Path]; ok && !strings.HasPrefix(first, f+" ") {
			p.add(where+".format", fmt.Sprintf("%q is written in %s: one file takes one format", a.Path, first))
			return
		}
		formats[a.Path] = f + " (" + where + ")"
	}
	note(c.AccessLog, "access_log")
	for i := range c.Hosts {
		hp := "hosts[" + strconv.Itoa(i) + "].access_log"
		a := c.Hosts[i].AccessLog
		if a != c.AccessLog {
			a.validate(p, hp)
		}
		note(a, hp)
	}
}
