package nginx

import (
	"bytes"
	"slices"
	"strings"

	"github.com/ramjet-proxy/ramjet/adoption"
)

// marker starts every line adoption writes or comments out, so that a
// reader of the file sees what ramjet changed.
const marker = "# ramjet adopt: "

// RealIP trusts ramjet's X-Forwarded-For from loopback: nginx takes the
// address ramjet appended (the last one) as the client's.
const RealIP = "set_real_ip_from 127.0.0.1; set_real_ip_from ::1; real_ip_header X-Forwarded-For;"

// HTTPSParam tells PHP (HTTPS=on) that ramjet took the request over TLS:
// on the origin address nginx's $https is empty, and an application
// that thinks itself on http redirects to https forever (WordPress).
const (
	HTTPSMap   = `map $http_x_forwarded_proto $ramjet_https { https on; default ""; }`
	HTTPSParam = "fastcgi_param HTTPS $ramjet_https if_not_empty;"
)

// Edits are the changes that bring the configuration to phase ph of
// plan p.
func (c *Config) Edits(p *adoption.Plan, ph adoption.Phase) []adoption.Edit {
	var es []adoption.Edit
	text := "\n\t" + marker + "ramjet takes TLS: PHP learns it from X-Forwarded-Proto\n\t" + HTTPSMap
	if !c.hasRealIP() {
		text = "\n\t" + marker + "ramjet is the client's peer now\n\t" + RealIP + text
	}
	es = append(es, adoption.Edit{File: c.HTTP.File, Start: c.openBrace(c.HTTP), End: c.openBrace(c.HTTP), Text: text})
	reuse := map[string]bool{} // sockets already given reuseport
	for _, s := range c.Servers {
		for _, x := range s.Listens {
			if x != nil && slices.Contains(x.Args, "reuseport") {
				reuse[socketKey(x)] = true
			}
		}
	}
	defaultDone := false
	for i, s := range c.Servers {
		if p.Disabled[i] {
			if ph == adoption.Moved {
				es = append(es, c.commentOut(s.Block, "ramjet answers this redirect itself (https_redirect)"))
			}
			continue
		}
		es = append(es, c.serverEdits(p, ph, s, reuse, &defaultDone)...)
	}
	return es
}

func (c *Config) serverEdits(p *adoption.Plan, ph adoption.Phase, s *Server, reuse map[string]bool, defaultDone *bool) []adoption.Edit {
	var es []adoption.Edit
	moved, isDefault := false, false
	for j, l := range s.Site.Listens {
		if !p.Moves(l.Addr) {
			continue
		}
		moved = true
		isDefault = isDefault || l.Default && l.Addr == p.Listen
		x := s.Listens[j]
		switch {
		case ph == adoption.Moved && x != nil:
			es = append(es, c.commentOut(x, "ramjet serves this address now"))
		case ph == adoption.Both && x != nil && !reuse[socketKey(x)]:
			// ramjet binds the address too while both serve: the kernel
			// shares it only when every socket on it has SO_REUSEPORT
			// (nginx takes it once per socket: "80" and "[::]:80" are two).
			reuse[socketKey(x)] = true
			end := x.End - 1 // the ';'
			es = append(es, adoption.Edit{File: x.File, Start: end, End: end, Text: " reuseport"})
		case ph == adoption.Both && x == nil: // nginx's implicit listen 80
			at := c.openBrace(s.Block)
			es = append(es, adoption.Edit{File: s.Block.File, Start: at, End: at, Text: "\n\tlisten " + ngxAddr(l.Addr) + reuseParam(reuse, l.Addr) + ";"})
		}
	}
	if !moved {
		return es
	}
	if s.Site.Cert != "" {
		es = append(es, c.httpsParams(s.Block)...)
	}
	def := ""
	if !*defaultDone && (isDefault || !c.hasDefault(p)) {
		def, *defaultDone = " default_server", true
	}
	at := c.openBrace(s.Block)
	return append(es, adoption.Edit{File: s.Block.File, Start: at, End: at,
		Text: "\n\t" + marker + "the origin ramjet forwards to\n\tlisten " + p.Origin + def + ";"})
}

func reuseParam(reuse map[string]bool, addr string) string {
	if reuse[addr] {
		return ""
	}
	reuse[addr] = true
	return " reuseport"
}

// hasDefault reports whether a server names itself default_server on
// ramjet's plain address.
func (c *Config) hasDefault(p *adoption.Plan) bool {
	for _, s := range c.Servers {
		for _, l := range s.Site.Listens {
			if l.Default && l.Addr == p.Listen {
				return true
			}
		}
	}
	return false
}

func (c *Config) hasRealIP() bool {
	return slices.ContainsFunc(c.HTTP.Block, func(x *Directive) bool { return x.Name == "real_ip_header" })
}

// openBrace is the offset just past the '{' of block b.
func (c *Config) openBrace(b *Directive) int {
	src := c.Dump.Files[b.File]
	i := b.Start + bytes.IndexByte(src[b.Start:], '{')
	return i + 1
}

// commentOut turns directive x (and its block) into comment lines.
func (c *Config) commentOut(x *Directive, why string) adoption.Edit {
	text := string(c.Dump.Files[x.File][x.Start:x.End])
	return adoption.Edit{File: x.File, Start: x.Start, End: x.End,
		Text: marker + why + "\n# " + strings.ReplaceAll(text, "\n", "\n# ") + "\n"}
}

// ngxAddr writes ramjet's ":80" as nginx's "*:80".
func ngxAddr(addr string) string {
	if strings.HasPrefix(addr, ":") {
		return "*" + addr
	}
	return addr
}

// httpsParams adds HTTPSParam after every fastcgi_pass in block b.
func (c *Config) httpsParams(b *Directive) []adoption.Edit {
	var es []adoption.Edit
	for _, x := range b.Block {
		if x.Name == "fastcgi_pass" {
			es = append(es, adoption.Edit{File: x.File, Start: x.End, End: x.End, Text: " " + HTTPSParam})
		}
		if x.IsBlock {
			es = append(es, c.httpsParams(x)...)
		}
	}
	return es
}

// socketKey names the socket a listen directive binds: "80", "*:80" and
// "0.0.0.0:80" are one, "[::]:80" another.
func socketKey(x *Directive) string {
	if strings.HasPrefix(x.Args[0], "[") {
		return strings.ToLower(x.Args[0])
	}
	a, _ := adoption.NormalAddr(x.Args[0]) // read as an address before
	return a
}
