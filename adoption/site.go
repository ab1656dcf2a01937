package adoption

import (
	"fmt"
	"net"
	"strings"
)

// Site is one virtual host of the web server: an nginx server block or
// an Apache <VirtualHost>.
type Site struct {
	// Names are the host names it answers to, lower case, exact or
	// "*.example.com"; the first names the site (its token file).
	Names   []string
	Listens []Listen
	// Cert and Key are its TLS certificate and key files ("" when none).
	Cert, Key string
	Root      string // document root, "" when none is visible
	PHP       PHP
	// OwnerUID is who owns the site: its PHP pool's user, else the owner
	// of its document root; -1 when neither is known.
	OwnerUID int
	Owner    string // OwnerUID's name, for messages
	// HTTPSRedirect: the block only redirects its names to https (ramjet
	// does that itself: hosts[].https_redirect).
	HTTPSRedirect bool
	// HtaccessRoot is the directory whose .htaccess files apply (Apache
	// with AllowOverride); "" when none do.
	HtaccessRoot string
	File         string // where the block starts
	Line         int
}

// Listen is one address a site is served on.
type Listen struct {
	// Addr is host:port as ramjet's listen takes it: ":80" for every
	// address (nginx "80", "*:80", "[::]:80"), else "10.0.0.1:80".
	Addr string
	// Socket is the socket a wildcard Addr is bound as, when the web
	// server binds one per family: "0.0.0.0:80" or "[::]:80" (nginx's
	// "80" and "[::]:80"); "" when Addr is the socket.
	Socket  string
	TLS     bool
	Default bool // the default server of its address
	File    string
	Line    int
}

// PHP is how a site runs PHP, when its configuration shows it.
type PHP struct {
	Handler string // fastcgi_pass / SetHandler target: "unix:/run/php/x.sock", "127.0.0.1:9000"
	User    string // the pool's user, from its php-fpm pool file
}

// Note is something of the web server's configuration that adoption
// cannot map to ramjet's, at FILE:LINE. Notes are reported, never
// silently dropped.
type Note struct {
	File string
	Line int
	Msg  string
}

func (n Note) String() string { return fmt.Sprintf("%s:%d: %s", n.File, n.Line, n.Msg) }

// NormalAddr turns a listen address ("80", "*:80", "[::]:80",
// "0.0.0.0:80", "10.0.0.1:80", "Localhost:8080") into ramjet's form; ok
// is false when it is not host:port or a port.
func NormalAddr(a string) (addr string, ok bool) {
	if !strings.Contains(a, ":") || strings.HasPrefix(a, "*:") {
		a = ":" + strings.TrimPrefix(a, "*:")
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil || !isPort(port) {
		return "", false
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return ":" + port, true
	}
	return net.JoinHostPort(strings.ToLower(host), port), true
}

func isPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n > 0 && n < 65536
}

// HostName normalises a server name for hosts[].names: lower case,
// without a trailing dot; ok is false for names ramjet cannot match (a
// regular expression, a trailing wildcard, a catch-all "_" or "").
func HostName(n string) (string, bool) {
	n = strings.TrimSuffix(strings.ToLower(n), ".")
	domain := strings.TrimPrefix(n, "*.")
	if domain == "" || strings.ContainsAny(domain, "*~:/ ") || n == "_" {
		return "", false
	}
	for label := range strings.SplitSeq(domain, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' || len(label) > 63 {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return n, true
}

// DuplicateNames refuses a name two sites declare on the same address:
// the web server (server, "nginx" or "Apache") serves only the first,
// and the second's owner would get the first's token. directive names
// what declares names ("server_name") in the message.
func DuplicateNames(sites []Site, directive, server string) error {
	first := map[string]int{}
	var errs []string
	for i, s := range sites {
		for _, l := range s.Listens {
			for _, n := range s.Names {
				k := n + " " + l.Addr
				j, dup := first[k]
				if !dup {
					first[k] = i
				} else if j != i {
					errs = append(errs, fmt.Sprintf("%s:%d: %s %q on %s is already declared at %s:%d (%s serves only the first)", s.File, s.Line, directive, n, l.Addr, sites[j].File, sites[j].Line, server))
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("duplicate server names:\n%s", strings.Join(errs, "\n"))
	}
	return nil
}
