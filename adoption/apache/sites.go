package apache

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ramjet-proxy/ramjet/adoption"
)

// Config is a read configuration: its virtual hosts as sites, its
// Listen directives, and what ramjet cannot take over.
type Config struct {
	Main    string
	Runtime *Runtime
	Files   map[string][]byte
	Tree    []*Directive
	Listens []*Directive
	VHosts  []*VHost
	Notes   []adoption.Note
}

// VHost is one <VirtualHost> in effect and the site read from it.
type VHost struct {
	Site  adoption.Site
	Block *Directive
}

func (c *Config) note(d *Directive, format string, args ...any) {
	c.Notes = append(c.Notes, adoption.Note{File: d.File, Line: d.Line, Msg: fmt.Sprintf(format, args...)})
}

// read finds the Listen directives and the virtual hosts in effect.
func (c *Config) read(pools map[string]string) {
	overrides := map[string]bool{} // <Directory> path -> AllowOverride other than None
	var walk func(ds []*Directive, vhosts bool)
	walk = func(ds []*Directive, vhosts bool) {
		for _, d := range ds {
			switch {
			case d.Is("Listen"):
				c.Listens = append(c.Listens, d)
			case d.Is("Directory") && d.IsBlock && len(d.Args) == 1:
				for _, x := range d.Block {
					if x.Is("AllowOverride") && len(x.Args) > 0 {
						overrides[filepath.Clean(strings.Trim(d.Args[0], `"`))] = !strings.EqualFold(x.Args[0], "None")
					}
				}
			case d.Is("VirtualHost") && d.IsBlock:
				if vhosts && c.Runtime.VirtualHosts[d.File+":"+strconv.Itoa(d.Line)] {
					c.VHosts = append(c.VHosts, &VHost{Block: d})
				}
			case d.IsBlock:
				walk(d.Block, vhosts)
			}
		}
	}
	walk(c.Tree, false) // Listen and <Directory> first: a vhost reads them
	c.Listens = nil
	walk(c.Tree, true)
	for _, v := range c.VHosts {
		c.readVHost(v, overrides, pools)
	}
}

func (c *Config) readVHost(v *VHost, overrides map[string]bool, pools map[string]string) {
	b := v.Block
	s := &v.Site
	*s = adoption.Site{File: b.File, Line: b.Line, OwnerUID: -1}
	tls := false
	for _, x := range b.Block {
		switch {
		case x.Is("ServerName") && len(x.Args) > 0:
			c.addName(s, x, serverName(x.Args[0]))
		case x.Is("ServerAlias"):
			for _, a := range x.Args {
				c.addName(s, x, a)
			}
		case x.Is("DocumentRoot") && len(x.Args) > 0:
			s.Root = x.Args[0]
		case x.Is("SSLEngine") && len(x.Args) > 0:
			tls = strings.EqualFold(x.Args[0], "on")
		case x.Is("SSLCertificateFile") && len(x.Args) > 0:
			s.Cert = c.abs(x.Args[0])
		case x.Is("SSLCertificateKeyFile") && len(x.Args) > 0:
			s.Key = c.abs(x.Args[0])
		case x.Is("SSLVerifyClient"):
			c.note(x, "SSLVerifyClient: ramjet does not ask clients for certificates; TLS for this site would stop checking them")
		case x.Is("SuexecUserGroup") || x.Is("AssignUserID"):
			if len(x.Args) > 0 {
				s.PHP.User = x.Args[0]
			}
		case x.Is("Directory") && x.IsBlock && len(x.Args) == 1:
			for _, y := range x.Block {
				if y.Is("AllowOverride") && len(y.Args) > 0 {
					overrides[filepath.Clean(x.Args[0])] = !strings.EqualFold(y.Args[0], "None")
				}
			}
		}
	}
	if !tls {
		s.Cert, s.Key = "", ""
	} else if s.Key == "" {
		s.Key = s.Cert // the key in the certificate's file
	}
	if h := phpHandler(b); h != "" {
		s.PHP.Handler = h
		if s.PHP.User == "" {
			s.PHP.User = pools[strings.TrimPrefix(h, "unix:")]
		}
	}
	if s.Root != "" && allowsOverride(overrides, s.Root) {
		s.HtaccessRoot = s.Root
	}
	s.HTTPSRedirect = httpsRedirectOnly(b, s.Names)
	c.listens(v, tls)
	s.FindOwner()
}

// listens maps the vhost's addresses to the Listen addresses they
// serve on.
func (c *Config) listens(v *VHost, tls bool) {
	for _, a := range v.Block.Args {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			c.note(v.Block, "<VirtualHost %s>: an address without a port; ramjet maps only host:port", a)
			continue
		}
		matched := false
		for _, l := range c.Listens {
			addr, ok := listenAddr(l)
			if !ok {
				continue
			}
			lh, lp, _ := net.SplitHostPort(addr) // NormalAddr's own form
			if lp != port || !(host == "*" || host == "_default_" || lh == "" || lh == strings.ToLower(host)) {
				continue
			}
			matched = true
			v.Site.Listens = append(v.Site.Listens, adoption.Listen{Addr: addr, TLS: tls, File: v.Block.File, Line: v.Block.Line})
		}
		if !matched {
			c.note(v.Block, "<VirtualHost %s>: no Listen serves it", a)
		}
	}
}

// listenAddr is a Listen directive's address in ramjet's form.
func listenAddr(l *Directive) (string, bool) {
	if len(l.Args) == 0 {
		return "", false
	}
	return adoption.NormalAddr(l.Args[0])
}

func (c *Config) addName(s *adoption.Site, x *Directive, a string) {
	n, ok := adoption.HostName(a)
	if !ok {
		c.note(x, "%s %q: ramjet matches exact names and leading \"*.\" wildcards only", x.Name, a)
		return
	}
	if !slices.Contains(s.Names, n) {
		s.Names = append(s.Names, n)
	}
}

// serverName drops the scheme and port ServerName may carry.
func serverName(a string) string {
	if i := strings.Index(a, "://"); i >= 0 {
		a = a[i+3:]
	}
	if h, _, err := net.SplitHostPort(a); err == nil {
		return h
	}
	return a
}

func (c *Config) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Runtime.ServerRoot, p)
}

// allowsOverride reports whether the <Directory> closest above dir
// allows .htaccess files (Apache's default: AllowOverride None).
func allowsOverride(overrides map[string]bool, dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if on, ok := overrides[d]; ok {
			return on
		}
		if d == "/" {
			return false
		}
	}
}

// phpHandler is the PHP-FPM address of the first proxy:…|fcgi://
// SetHandler (or ProxyPassMatch to fcgi://) in the vhost.
func phpHandler(b *Directive) string {
	for _, x := range b.Block {
		if x.Is("SetHandler") && len(x.Args) > 0 {
			if sock, ok := strings.CutPrefix(x.Args[0], "proxy:unix:"); ok {
				p, _, _ := strings.Cut(sock, "|")
				return "unix:" + p
			}
			if a, ok := strings.CutPrefix(x.Args[0], "proxy:fcgi://"); ok {
				h, _, _ := strings.Cut(a, "/")
				return h
			}
		}
		if x.Is("ProxyPassMatch") && len(x.Args) > 1 {
			if a, ok := strings.CutPrefix(x.Args[1], "fcgi://"); ok {
				h, _, _ := strings.Cut(a, "/")
				return h
			}
		}
		if x.IsBlock {
			if h := phpHandler(x); h != "" {
				return h
			}
		}
	}
	return ""
}

// httpsRedirectOnly reports a vhost whose only answer is a redirect of
// the same URL to https for one of its own names.
func httpsRedirectOnly(b *Directive, names []string) bool {
	redirect := false
	for _, x := range b.Block {
		switch {
		case x.Is("ServerName"), x.Is("ServerAlias"), x.Is("ErrorLog"), x.Is("CustomLog"), x.Is("LogLevel"), x.Is("ServerAdmin"), x.Is("DocumentRoot"):
		case x.Is("Redirect") || x.Is("RedirectPermanent"):
			args := x.Args
			if len(args) == 3 && slices.Contains([]string{"permanent", "301", "302", "temp", "307", "308"}, strings.ToLower(args[0])) {
				args = args[1:]
			}
			redirect = len(args) == 2 && args[0] == "/" && slices.ContainsFunc(names, func(n string) bool {
				return strings.TrimSuffix(args[1], "/") == "https://"+n
			})
		default:
			return false
		}
	}
	return redirect
}

// checkDuplicates refuses a name two virtual hosts declare on the same
// address: Apache serves only the first.
func (c *Config) checkDuplicates() error {
	return adoption.DuplicateNames(c.Sites(), "ServerName/ServerAlias", "Apache")
}

// Sites are the virtual hosts' sites, in order; the first of each
// address is its default (Apache's rule).
func (c *Config) Sites() []adoption.Site {
	out := make([]adoption.Site, len(c.VHosts))
	first := map[string]bool{}
	for i, v := range c.VHosts {
		out[i] = v.Site
		out[i].Listens = slices.Clone(v.Site.Listens)
		for j := range out[i].Listens {
			if a := out[i].Listens[j].Addr; !first[a] {
				first[a], out[i].Listens[j].Default = true, true
			}
		}
	}
	return out
}
