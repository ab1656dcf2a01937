package apache

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ramjet-proxy/ramjet/adoption"
)

// marker starts every line adoption writes or comments out.
const marker = "# ramjet adopt: "

// Edits are the changes that bring the configuration to phase ph of
// plan p. modules is Apache's module directory (mod_remoteip.so).
func (c *Config) Edits(modules string) func(*adoption.Plan, adoption.Phase) []adoption.Edit {
	return func(p *adoption.Plan, ph adoption.Phase) []adoption.Edit {
		es := []adoption.Edit{c.mainEdit(p, modules)}
		es = append(es, c.listenEdits(p, ph)...)
		for i, v := range c.VHosts {
			es = append(es, c.vhostEdits(p, ph, v, p.Disabled[i])...)
		}
		return es
	}
}

// mainEdit appends to the main file: mod_remoteip trusting ramjet's
// X-Forwarded-For from loopback (README, "Apache as the origin"), and
// SO_REUSEPORT on the listeners Apache opens, so that it can take its
// addresses back beside ramjet on --rollback.
func (c *Config) mainEdit(_ *adoption.Plan, modules string) adoption.Edit {
	end := len(c.Files[c.Main])
	text := "\n" + marker + "ramjet is the client's peer now; listeners share their address (SO_REUSEPORT)\n" +
		"<IfModule !remoteip_module>\n\tLoadModule remoteip_module " + modules + "/mod_remoteip.so\n</IfModule>\n" +
		"RemoteIPHeader X-Forwarded-For\nRemoteIPInternalProxy 127.0.0.1 ::1\nListenCoresBucketsRatio 1\n"
	if end > 0 && c.Files[c.Main][end-1] != '\n' {
		text = "\n" + text
	}
	return adoption.Edit{File: c.Main, Start: end, End: end, Text: text}
}

func (c *Config) listenEdits(p *adoption.Plan, ph adoption.Phase) []adoption.Edit {
	var es []adoption.Edit
	added := false
	for _, l := range c.Listens {
		addr, ok := listenAddr(l)
		if !ok || !p.Moves(addr) {
			continue
		}
		text := ""
		if !added {
			text = marker + "the origin ramjet forwards to\nListen " + p.Origin + "\n"
			added = true
		}
		if ph == adoption.Moved {
			text += commented(c.Files[l.File][l.Start:l.End], "ramjet serves this address now")
		} else {
			text += string(c.Files[l.File][l.Start:l.End])
		}
		es = append(es, adoption.Edit{File: l.File, Start: l.Start, End: l.End, Text: text})
	}
	return es
}

func (c *Config) vhostEdits(p *adoption.Plan, ph adoption.Phase, v *VHost, disabled bool) []adoption.Edit {
	b := v.Block
	moved := slices.ContainsFunc(v.Site.Listens, func(l adoption.Listen) bool { return p.Moves(l.Addr) })
	switch {
	case !moved:
		return nil
	case disabled && ph == adoption.Moved:
		return []adoption.Edit{{File: b.File, Start: b.Start, End: b.End,
			Text: commented(c.Files[b.File][b.Start:b.End], "ramjet answers this redirect itself (https_redirect)")}}
	case disabled:
		return nil // serves its address until ramjet takes it
	case v.Site.Cert != "":
		// TLS: ramjet terminates it; the origin gets a plain copy.
		copyText := c.plainCopy(p, b)
		if ph == adoption.Moved {
			return []adoption.Edit{{File: b.File, Start: b.Start, End: b.End,
				Text: commented(c.Files[b.File][b.Start:b.End], "ramjet terminates TLS for this site now; the copy below serves it") + copyText}}
		}
		return []adoption.Edit{{File: b.File, Start: b.End, End: b.End, Text: copyText}}
	}
	addrs := p.Origin
	if ph == adoption.Both {
		addrs = strings.Join(b.Args, " ") + " " + p.Origin
	}
	return []adoption.Edit{{File: b.File, Start: b.Start, End: b.HeadEnd,
		Text: marker + "the origin ramjet forwards to\n<" + b.Name + " " + addrs + ">\n"}}
}

// plainCopy is the TLS vhost b on the origin address, its SSL
// directives commented out.
func (c *Config) plainCopy(p *adoption.Plan, b *Directive) string {
	src := c.Files[b.File]
	var es []adoption.Edit
	for _, x := range b.Block {
		if strings.HasPrefix(strings.ToLower(x.Name), "ssl") {
			es = append(es, adoption.Edit{File: b.File, Start: x.Start - b.HeadEnd, End: x.End - b.HeadEnd,
				Text: commented(src[x.Start:x.End], "ramjet terminates TLS")})
		}
	}
	body, err := adoption.ApplyEdits(map[string][]byte{b.File: src[b.HeadEnd:b.End]}, es)
	text := string(src[b.HeadEnd:b.End])
	if err == nil && len(es) > 0 {
		text = string(body[b.File])
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	// PHP learns from X-Forwarded-Proto that ramjet took the request over
	// TLS (mod_ssl no longer says HTTPS=on): an application that thinks
	// itself on http redirects to https forever (WordPress).
	https := "\t<IfModule setenvif_module>\n\t\tSetEnvIf X-Forwarded-Proto \"^https$\" HTTPS=on\n\t</IfModule>\n"
	return fmt.Sprintf("%sa plain copy of the TLS site above, for ramjet\n<%s %s>\n%s%s", marker, b.Name, p.Origin, https, text)
}

// commented turns text into comment lines after a line saying why.
func commented(text []byte, why string) string {
	s := strings.TrimSuffix(string(text), "\n")
	return marker + why + "\n# " + strings.ReplaceAll(s, "\n", "\n# ") + "\n"
}
