package nginx

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ramjet-proxy/ramjet/adoption"
)

// Config is a read configuration: its server blocks as sites, and what
// of them ramjet cannot take over.
type Config struct {
	Dump    *Dump
	HTTP    *Directive // the http block
	Servers []*Server
	Notes   []adoption.Note
}

// Server is one server block and the site read from it.
type Server struct {
	Site    adoption.Site
	Block   *Directive
	Listens []*Directive // in the order written; parallel to Site.Listens where mapped
}

// Read finds the server blocks of the dumped configuration. pools maps
// a php-fpm pool's listen address ("/run/php/a.sock", "127.0.0.1:9000")
// to its user, for the sites whose fastcgi_pass names one.
func Read(d *Dump, pools map[string]string) (*Config, error) {
	tree, err := d.Tree()
	if err != nil {
		return nil, err
	}
	c := &Config{Dump: d}
	for _, x := range tree {
		if x.Name == "http" && x.IsBlock {
			c.HTTP = x
		}
	}
	if c.HTTP == nil {
		return nil, fmt.Errorf("%s: no http block: nothing to adopt", d.Main)
	}
	inherited := map[string][]string{}
	for _, x := range c.HTTP.Block {
		switch x.Name {
		case "ssl_certificate", "ssl_certificate_key", "root":
			inherited[x.Name] = x.Args
		}
	}
	for _, x := range c.HTTP.Block {
		if x.Name == "server" && x.IsBlock {
			c.Servers = append(c.Servers, c.readServer(x, inherited, pools))
		}
	}
	return c, c.checkDuplicates()
}

func (c *Config) note(x *Directive, format string, args ...any) {
	c.Notes = append(c.Notes, adoption.Note{File: x.File, Line: x.Line, Msg: fmt.Sprintf(format, args...)})
}

func (c *Config) readServer(b *Directive, inherited map[string][]string, pools map[string]string) *Server {
	s := &Server{Block: b, Site: adoption.Site{File: b.File, Line: b.Line, OwnerUID: -1}}
	own := map[string][]string{}
	for _, x := range b.Block {
		switch x.Name {
		case "listen":
			c.readListen(s, x)
		case "server_name":
			c.readNames(s, x)
		case "ssl_certificate", "ssl_certificate_key", "root":
			if _, dup := own[x.Name]; dup && x.Name == "ssl_certificate" {
				c.note(x, "a second ssl_certificate (another key type): ramjet serves the first one's")
				continue
			}
			own[x.Name] = x.Args
		case "ssl_client_certificate", "ssl_verify_client":
			c.note(x, "%s: ramjet does not ask clients for certificates; TLS for this site would stop checking them", x.Name)
		}
	}
	if len(s.Listens) == 0 {
		s.Site.Listens = append(s.Site.Listens, adoption.Listen{Addr: ":80", File: b.File, Line: b.Line})
		s.Listens = append(s.Listens, nil) // nginx's default listen: nothing written to move
	}
	get := func(k string) string {
		if v, ok := own[k]; ok && len(v) > 0 {
			return v[0]
		}
		if v := inherited[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	s.Site.Root = c.abs(get("root"))
	if s.Site.Root == "" {
		s.Site.Root = c.abs(locationRoot(b))
	}
	if tlsListen(s.Site.Listens) {
		s.Site.Cert, s.Site.Key = c.abs(get("ssl_certificate")), c.abs(get("ssl_certificate_key"))
		if strings.Contains(s.Site.Cert+s.Site.Key, "$") {
			c.note(b, "ssl_certificate with variables: give ramjet the certificates of this site's names in tls.hosts")
			s.Site.Cert, s.Site.Key = "", ""
		}
	}
	s.Site.PHP.Handler = fastcgiPass(b)
	s.Site.PHP.User = pools[strings.TrimPrefix(s.Site.PHP.Handler, "unix:")]
	s.Site.HTTPSRedirect = httpsRedirectOnly(b)
	s.Site.FindOwner()
	return s
}

func tlsListen(ls []adoption.Listen) bool {
	return slices.ContainsFunc(ls, func(l adoption.Listen) bool { return l.TLS })
}

// abs makes a relative path absolute as nginx does: under the
// configuration's directory.
func (c *Config) abs(p string) string {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "$") {
		return p
	}
	return filepath.Join(filepath.Dir(c.Dump.Main), p)
}

func (c *Config) readListen(s *Server, x *Directive) {
	if len(x.Args) == 0 {
		c.note(x, "listen without an address")
		return
	}
	if strings.HasPrefix(x.Args[0], "unix:") {
		c.note(x, "listen on a unix socket: ramjet listens on TCP; this listen stays as it is")
		return
	}
	addr, ok := adoption.NormalAddr(x.Args[0])
	if !ok {
		c.note(x, "listen %q: not an address ramjet can take", x.Args[0])
		return
	}
	l := adoption.Listen{Addr: addr, File: x.File, Line: x.Line, Socket: wildcardSocket(x)}
	for _, p := range x.Args[1:] {
		switch p {
		case "ssl":
			l.TLS = true
		case "default_server", "default":
			l.Default = true
		case "quic":
			c.note(x, "listen quic (HTTP/3): ramjet serves HTTP/3 itself with tls.http3; this listen stays as it is")
			return
		case "proxy_protocol":
			c.note(x, "listen proxy_protocol: set ramjet's server.proxy_protocol or tls.proxy_protocol for the relay in front")
		}
	}
	s.Site.Listens = append(s.Site.Listens, l)
	s.Listens = append(s.Listens, x)
}

func (c *Config) readNames(s *Server, x *Directive) {
	for _, a := range x.Args {
		if a == "" || a == "_" {
			continue // the catch-all of a default server
		}
		if strings.HasPrefix(a, ".") { // ".example.com": the domain and its subdomains
			c.addName(s, x, a[1:])
			c.addName(s, x, "*"+a)
			continue
		}
		c.addName(s, x, a)
	}
}

func (c *Config) addName(s *Server, x *Directive, a string) {
	n, ok := adoption.HostName(a)
	if !ok {
		c.note(x, "server_name %q: ramjet matches exact names and leading \"*.\" wildcards only; requests for it reach nginx through ramjet's defaults", a)
		return
	}
	if !slices.Contains(s.Site.Names, n) {
		s.Site.Names = append(s.Site.Names, n)
	}
}

// checkDuplicates refuses a name two server blocks declare on the same
// address: nginx serves only the first ("conflicting server name"
// warning).
func (c *Config) checkDuplicates() error {
	return adoption.DuplicateNames(c.Sites(), "server_name", "nginx")
}

// locationRoot is the root of "location /", when the server has none.
func locationRoot(b *Directive) string {
	for _, x := range b.Block {
		if x.Name == "location" && x.IsBlock && len(x.Args) == 1 && x.Args[0] == "/" {
			for _, y := range x.Block {
				if y.Name == "root" && len(y.Args) > 0 {
					return y.Args[0]
				}
			}
		}
	}
	return ""
}

// fastcgiPass is the first fastcgi_pass in the server, at any depth.
func fastcgiPass(b *Directive) string {
	for _, x := range b.Block {
		if x.Name == "fastcgi_pass" && len(x.Args) > 0 {
			return x.Args[0]
		}
		if x.IsBlock {
			if h := fastcgiPass(x); h != "" {
				return h
			}
		}
	}
	return ""
}

// httpsRedirectOnly reports a server whose only answer is a redirect of
// the same URL to https.
func httpsRedirectOnly(b *Directive) bool {
	redirect := false
	for _, x := range b.Block {
		switch x.Name {
		case "listen", "server_name", "access_log", "error_log", "server_tokens":
		case "return":
			redirect = len(x.Args) == 2 && slices.Contains([]string{"301", "302", "307", "308"}, x.Args[0]) &&
				slices.Contains([]string{"https://$host$request_uri", "https://$server_name$request_uri", "https://$http_host$request_uri"}, x.Args[1])
		default:
			return false
		}
	}
	return redirect
}

// wildcardSocket is the socket a wildcard listen binds: nginx binds
// "[::]:80" IPv6 only (unless ipv6only=off) beside "80"'s IPv4 one.
func wildcardSocket(x *Directive) string {
	a := x.Args[0]
	if strings.HasPrefix(a, "[") {
		if !strings.HasPrefix(a, "[::]:") || slices.Contains(x.Args[1:], "ipv6only=off") {
			return ""
		}
		return a
	}
	if n, ok := adoption.NormalAddr(a); ok && strings.HasPrefix(n, ":") {
		return "0.0.0.0" + n
	}
	return ""
}
