package conf

import (
	"fmt"
	"strconv"
)

// ProxyProtocol makes a listener take only connections that open with a
// PROXY protocol header (v1 or v2; on a TLS listener, before the
// handshake), as nginx's `listen … proxy_protocol` and HAProxy's
// `accept-proxy` do, and only from Allow. The header's source address is
// then the connection's client address.
type ProxyProtocol struct {
	Enabled bool `yaml:"enabled"`
	// Allow are the networks (CIDR or address) of the balancers or
	// terminators that send the header; a connection from anywhere else
	// is closed unread, and one from here without a valid header too.
	Allow   []string `yaml:"allow"`
	Timeout Duration `yaml:"timeout"` // for the header to arrive
}

// RealIP names the trusted proxies whose forwarding header carries the
// client's address, as nginx's set_real_ip_from, real_ip_header and
// real_ip_recursive on: the client is the rightmost hop not in From.
// It applies on every listener, the admin one included.
type RealIP struct {
	From   []string `yaml:"from"`   // CIDR or address; empty: nobody's header counts
	Header string   `yaml:"header"` // X-Forwarded-For, or one naming a single address (X-Real-IP)
}

// validate checks r; a block for a listener the file does not configure
// is fine (a flag may add the listener).
func (r *ProxyProtocol) validate(p *problems, path string) {
	if !r.Enabled {
		if len(r.Allow) > 0 {
			p.add(path+".allow", "is set but enabled is false: set enabled: true or remove allow")
		}
		return
	}
	if len(r.Allow) == 0 {
		p.add(path+".allow", "must list the networks that send PROXY headers (the load balancers or terminators)")
	}
	p.trustedNetworks(path+".allow", r.Allow)
	p.positive(path+".timeout", r.Timeout)
}

func (r *RealIP) validate(p *problems) {
	p.trustedNetworks("real_ip.from", r.From)
	if !validFieldName(r.Header) {
		p.add("real_ip.header", fmt.Sprintf("%q is not a header name", r.Header))
	}
}

// trustedNetworks checks a list of networks whose peers are believed
// about other addresses: one that holds every address would let anyone
// name any client.
func (p *problems) trustedNetworks(path string, list []string) {
	for i, s := range list {
		ip := path + "[" + strconv.Itoa(i) + "]"
		switch pfx, err := ParsePrefix(s); {
		case err != nil:
			p.add(ip, err.Error())
		case pfx.Bits() == 0:
			p.add(ip, fmt.Sprintf("%q trusts every address: anyone could name any client; list the proxies' networks", s))
		}
	}
}
