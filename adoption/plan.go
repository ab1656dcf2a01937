package adoption

import (
	"fmt"
	"net"
	"slices"
	"strings"
)

// Options choose where things go.
type Options struct {
	Origin   string   // loopback host:port the web server moves to ("127.0.0.1:8081")
	Admin    string   // ramjet's admin listener ("127.0.0.1:9090")
	TokenDir string   // one token file per site ("/etc/ramjet/tokens")
	Exclude  []string // site names (any of a site's names) ramjet passes through uncached
	Source   string   // what was read, for the header ("nginx /etc/nginx/nginx.conf")
}

// Host is one hosts[] entry: the sites of the web server that share
// names (an https redirect and its TLS block) as one ramjet site.
type Host struct {
	Names         []string
	Cert, Key     string
	HTTPSRedirect bool
	HtaccessRoot  string
	OwnerUID      int
	Owner         string
	Excluded      bool
	Sites         []int // indexes into Plan.Sites
}

// Plan is what adopting the web server does: ramjet's listeners (the
// web server's public addresses), its hosts, and which of the web
// server's sites move or are turned off.
type Plan struct {
	Options
	Listen, TLSListen string
	// ListenAlso are the web server's other plain addresses of Listen's
	// port (127.0.0.1:80 beside [::1]:80): ramjet takes them too, on
	// sockets of their own, so that the connections queued on each of
	// the web server's move to ramjet's of the same address.
	ListenAlso []string
	// Socket is the socket ramjet binds for a wildcard Listen split in
	// two (splitWildcard); "" when Listen is.
	Socket      string
	DefaultCert string
	DefaultKey  string
	Sites       []Site
	Hosts       []Host
	// Disabled are sites (indexes into Sites) the web server stops
	// serving: https redirects ramjet answers itself.
	Disabled map[int]bool
	Notes    []Note
}

// NewPlan maps the web server's sites to ramjet's hosts.
func NewPlan(sites []Site, notes []Note, o Options) (*Plan, error) {
	p := &Plan{Options: o, Sites: sites, Notes: notes, Disabled: map[int]bool{}}
	p.Listen, p.TLSListen = p.commonAddr(false), p.commonAddr(true)
	p.ListenAlso = p.sameport()
	if p.Listen == "" && p.TLSListen == "" {
		return nil, fmt.Errorf("no site listens on an address ramjet can take")
	}
	if p.Listen == p.TLSListen {
		return nil, fmt.Errorf("%s is both a plain and a TLS address of the web server: ramjet takes each on its own port", p.Listen)
	}
	p.noteOtherAddrs()
	for i := range sites {
		p.addSite(i)
	}
	for _, ex := range o.Exclude {
		if !p.exclude(ex) {
			return nil, fmt.Errorf("--exclude %s: no site has that name", ex)
		}
	}
	p.tlsOnly()
	p.defaultCert()
	return p, nil
}

// tlsOnly redirects to https the plain requests for a host the web
// server serves over TLS alone: they reached its plain default server,
// and would otherwise reach the site itself, unencrypted, through the
// origin address.
func (p *Plan) tlsOnly() {
	for i := range p.Hosts {
		h := &p.Hosts[i]
		plain := false
		for _, s := range h.Sites {
			for _, l := range p.Sites[s].Listens {
				plain = plain || !l.TLS
			}
		}
		if !plain && !h.HTTPSRedirect && p.TLSListen != "" {
			h.HTTPSRedirect = true
			s := p.Sites[h.Sites[0]]
			p.Notes = append(p.Notes, Note{File: s.File, Line: s.Line, Msg: "served over TLS only: ramjet redirects its plain requests to https (https_redirect) instead of passing them to the web server's default server"})
		}
	}
}

// Moves reports whether the web server gives addr up to ramjet.
func (p *Plan) Moves(addr string) bool {
	return addr != "" && (addr == p.Listen || addr == p.TLSListen || slices.Contains(p.ListenAlso, addr))
}

// splitWildcard is, for a wildcard Listen the web server binds as two
// sockets (nginx's "listen 80; listen [::]:80;"), the sockets ramjet
// binds instead: 0.0.0.0:80 (Socket) and [::]:80 (ListenAlso), each
// joining the web server's socket of its family.
func (p *Plan) splitWildcard() []string {
	var socks []string
	for _, s := range p.Sites {
		for _, l := range s.Listens {
			if !l.TLS && l.Addr == p.Listen && l.Socket != "" && !slices.Contains(socks, l.Socket) {
				socks = append(socks, l.Socket)
			}
		}
	}
	if len(socks) < 2 {
		return nil
	}
	slices.Sort(socks) // 0.0.0.0 before [::]
	p.Socket = socks[0]
	return socks[1:]
}

// listen is ramjet's first plain address: Listen, or the socket it
// is bound as.
func (p *Plan) listen() string {
	if p.Socket != "" {
		return p.Socket
	}
	return p.Listen
}

// Listens are the addresses ramjet takes.
func (p *Plan) Listens() []string {
	all := append([]string{p.listen(), p.TLSListen}, p.ListenAlso...)
	return slices.DeleteFunc(all, func(s string) bool { return s == "" })
}

// sameport is ListenAlso: the other plain addresses sites listen on
// with Listen's port, when Listen is one address (a wildcard is all).
func (p *Plan) sameport() []string {
	host, port, err := net.SplitHostPort(p.Listen)
	if err != nil {
		return nil
	}
	if host == "" {
		return p.splitWildcard()
	}
	var out []string
	for _, s := range p.Sites {
		for _, l := range s.Listens {
			h, pt, err := net.SplitHostPort(l.Addr)
			if err == nil && !l.TLS && pt == port && h != "" && l.Addr != p.Listen && !slices.Contains(out, l.Addr) {
				out = append(out, l.Addr)
			}
		}
	}
	slices.Sort(out)
	return out
}

// commonAddr is the address most sites listen on, plain or TLS.
func (p *Plan) commonAddr(tls bool) string {
	count := map[string]int{}
	best := ""
	for _, s := range p.Sites {
		for _, l := range s.Listens {
			if l.TLS != tls {
				continue
			}
			count[l.Addr]++
			if c := count[l.Addr]; c > count[best] || c == count[best] && l.Addr < best {
				best = l.Addr
			}
		}
	}
	return best
}

func (p *Plan) noteOtherAddrs() {
	for _, s := range p.Sites {
		for _, l := range s.Listens {
			if !p.Moves(l.Addr) {
				p.Notes = append(p.Notes, Note{File: l.File, Line: l.Line,
					Msg: fmt.Sprintf("ramjet takes %s; this listen on %s stays with the web server, outside ramjet", p.both(), l.Addr)})
			}
		}
	}
}

func (p *Plan) both() string {
	return strings.Join(p.Listens(), " and ")
}

// addSite adds site i to the host sharing a name with it, or as a new
// host.
func (p *Plan) addSite(i int) {
	s := p.Sites[i]
	if len(s.Names) == 0 {
		return // a catch-all default server: ramjet's defaults reach it
	}
	if !slices.ContainsFunc(s.Listens, func(l Listen) bool { return p.Moves(l.Addr) }) {
		return // stays with the web server alone (noted)
	}
	for h := range p.Hosts {
		if !slices.ContainsFunc(s.Names, func(n string) bool { return slices.Contains(p.Hosts[h].Names, n) }) {
			continue
		}
		p.merge(&p.Hosts[h], i)
		return
	}
	p.Hosts = append(p.Hosts, Host{Names: slices.Clone(s.Names), Cert: s.Cert, Key: s.Key, HTTPSRedirect: s.HTTPSRedirect && s.Cert == "",
		HtaccessRoot: s.HtaccessRoot, OwnerUID: s.OwnerUID, Owner: s.Owner, Sites: []int{i}})
}

// merge joins site i to host h: a plain-HTTP redirect to https and the
// TLS site become one host that ramjet redirects itself; two sites
// serving the same names on different addresses share one origin port
// after the move, where the web server serves them from the first.
func (p *Plan) merge(h *Host, i int) {
	s := p.Sites[i]
	first := p.Sites[h.Sites[0]]
	for _, n := range s.Names {
		if !slices.Contains(h.Names, n) {
			h.Names = append(h.Names, n)
		}
	}
	if h.Cert == "" {
		h.Cert, h.Key = s.Cert, s.Key
	}
	if h.OwnerUID < 0 {
		h.OwnerUID, h.Owner = s.OwnerUID, s.Owner
	}
	if h.HtaccessRoot == "" {
		h.HtaccessRoot = s.HtaccessRoot
	}
	switch {
	case s.HTTPSRedirect && s.Cert == "":
		h.HTTPSRedirect = true
		p.Disabled[i] = true
	case first.HTTPSRedirect && first.Cert == "":
		h.HTTPSRedirect = true
		p.Disabled[h.Sites[0]] = true
	default:
		p.Notes = append(p.Notes, Note{File: s.File, Line: s.Line, Msg: fmt.Sprintf(
			"serves names of the site at %s:%d on another address; both move to %s, where the web server answers them from the first", first.File, first.Line, p.Origin)})
	}
	h.Sites = append(h.Sites, i)
}

func (p *Plan) exclude(name string) bool {
	for i := range p.Hosts {
		if slices.Contains(p.Hosts[i].Names, name) {
			p.Hosts[i].Excluded = true
			return true
		}
	}
	return false
}

// defaultCert is the certificate of the TLS address's default server,
// else the first TLS site's: what a client naming no known site gets.
func (p *Plan) defaultCert() {
	for _, s := range p.Sites {
		for _, l := range s.Listens {
			if l.TLS && l.Default && l.Addr == p.TLSListen && s.Cert != "" {
				p.DefaultCert, p.DefaultKey = s.Cert, s.Key
				return
			}
		}
	}
	for _, h := range p.Hosts {
		if h.Cert != "" {
			p.DefaultCert, p.DefaultKey = h.Cert, h.Key
			return
		}
	}
}
