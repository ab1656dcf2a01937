package conf

import (
	"fmt"
	"net"
	"reflect"
	"strconv"

	"gopkg.in/yaml.v3"
)

// decodeListen reads listen: one address, or a list of them (the first
// is Listen, the others ListenAlso).
func (d *decoder) decodeListen(n *yaml.Node, c *Config) {
	if n.Kind != yaml.SequenceNode {
		d.decodeValue(n, reflect.ValueOf(&c.Listen).Elem(), "listen")
		return
	}
	var addrs []string
	d.decodeStrings(n, reflect.ValueOf(&addrs).Elem(), "listen")
	if len(addrs) == 0 {
		d.fail("listen", "an empty list: name at least one address")
		return
	}
	c.Listen, c.ListenAlso = addrs[0], addrs[1:]
}

// validateListens checks the addresses of a listen list: each a
// host:port with an IP address (a list's IPv6 address is bound IPv6
// only, and a name could resolve to either), none twice, none another
// listener's.
func (c *Config) validateListens(p *problems) {
	if len(c.ListenAlso) == 0 {
		return
	}
	seen := map[string]string{c.Admin.Listen: "admin.listen", c.TLS.Listen: "tls.listen", c.H2C.Listen: "h2c.listen"}
	for i, a := range append([]string{c.Listen}, c.ListenAlso...) {
		path := "listen[" + strconv.Itoa(i) + "]"
		host, ok := p.listen(path, a)
		if !ok {
			continue
		}
		if net.ParseIP(host) == nil {
			p.add(path, fmt.Sprintf("%q: each address of a list is an IP address and port (0.0.0.0:80 and [::]:80, not :80)", a))
		}
		if first, dup := seen[a]; dup {
			p.add(path, fmt.Sprintf("%q is %s already", a, first))
		}
		seen[a] = path
	}
}
