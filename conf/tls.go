package conf

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// TLS is the HTTPS listener: TLS 1.2/1.3, HTTP/2 and HTTP/1.1 chosen by
// ALPN, certificates chosen by SNI and reloaded when their files change.
type TLS struct {
	Listen string `yaml:"listen"` // host:port; "" = no TLS listener
	// Cert and Key are the default certificate (PEM: leaf, then its
	// chain) for clients whose server name matches no entry of Hosts.
	Cert  string    `yaml:"cert"`
	Key   string    `yaml:"key"`
	Hosts []TLSHost `yaml:"hosts"`
	// OCSP staples OCSP responses for certificates that name a responder.
	OCSP        bool     `yaml:"ocsp"`
	OCSPTimeout Duration `yaml:"ocsp_timeout"` // one OCSP fetch
	// H2MaxStreams bounds concurrent streams per HTTP/2 connection (TLS
	// and h2c listeners).
	H2MaxStreams  int           `yaml:"h2_max_streams"`
	ProxyProtocol ProxyProtocol `yaml:"proxy_protocol"` // before the handshake
	// HTTP3 serves HTTP/3 over QUIC on UDP at Listen's port, with the
	// same certificates, and advertises it (Alt-Svc) on TLS responses.
	HTTP3 bool `yaml:"http3"`
	// H3MaxStreams bounds concurrent requests per HTTP/3 connection.
	H3MaxStreams int `yaml:"h3_max_streams"`
	// H3ZeroRTT accepts 0-RTT resumption: GET and HEAD without a body
	// are served from early data, anything else waits for the handshake.
	H3ZeroRTT bool `yaml:"h3_0rtt"`
	// H3StreamWindow and H3ConnWindow bound the flow-control windows an
	// HTTP/3 client's uploads get, per stream and per connection (QUIC
	// grows them from 512 KiB while the client keeps up): what one
	// connection can make ramjet buffer, and what a long path needs to
	// upload at full speed.
	H3StreamWindow Size `yaml:"h3_stream_window"`
	H3ConnWindow   Size `yaml:"h3_conn_window"`
}

// TLSHost is a certificate served to clients asking for one of Names.
type TLSHost struct {
	// Names are lower case, exact or "*.example.com" (one label).
	Names []string `yaml:"names"`
	Cert  string   `yaml:"cert"`
	Key   string   `yaml:"key"`
}

// H2C is a plain listener that also speaks HTTP/2 with prior knowledge,
// for a TLS terminator in front of ramjet.
type H2C struct {
	Listen string `yaml:"listen"` // host:port; "" = none
	// BehindTLS marks every request on the listener as HTTPS (scheme,
	// X-Forwarded-Proto, HSTS). Set it only when nothing but the TLS
	// terminator can reach the listener. It says nothing about who the
	// client is: that comes from ProxyProtocol or RealIP, and the
	// terminator's own address is trusted for nothing.
	BehindTLS     bool          `yaml:"behind_tls"`
	ProxyProtocol ProxyProtocol `yaml:"proxy_protocol"`
}

// minH3Window is the smallest HTTP/3 flow-control window taken: below a
// few packets' worth an upload stalls every round trip.
const minH3Window = 16 << 10

// validateTLS checks the TLS and h2c listeners. Certificate files are read
// only when the TLS listener is on.
func (c *Config) validateTLS(p *problems) {
	t := &c.TLS
	others := map[string]string{c.Listen: "listen", c.Admin.Listen: "admin.listen"}
	if t.Listen != "" {
		if _, ok := p.listen("tls.listen", t.Listen); ok {
			if other, dup := others[t.Listen]; dup {
				p.add("tls.listen", "must differ from "+other)
			}
			others[t.Listen] = "tls.listen"
		}
		if t.Cert == "" && t.Key == "" && len(t.Hosts) == 0 {
			p.add("tls.listen", "needs a default certificate (tls.cert and tls.key) or tls.hosts")
		}
	}
	on := t.Listen != ""
	if (t.Cert == "") != (t.Key == "") {
		p.add("tls", "cert and key must be set together")
	}
	p.files("tls", t.Cert, t.Key, on)
	seen := map[string]string{}
	for i, h := range t.Hosts {
		hp := "tls.hosts[" + strconv.Itoa(i) + "]"
		p.hostNames(hp, h.Names, seen)
		if h.Cert == "" || h.Key == "" {
			p.add(hp, "needs both cert and key")
		}
		p.files(hp, h.Cert, h.Key, on)
	}
	if t.OCSP {
		p.positive("tls.ocsp_timeout", t.OCSPTimeout)
	}
	p.minInt("tls.h2_max_streams", t.H2MaxStreams, 1)
	p.minInt("tls.h3_max_streams", t.H3MaxStreams, 1)
	p.minSize("tls.h3_stream_window", t.H3StreamWindow, minH3Window)
	p.minSize("tls.h3_conn_window", t.H3ConnWindow, max(minH3Window, t.H3StreamWindow))
	if t.HTTP3 && t.Listen == "" {
		p.add("tls.http3", "needs tls.listen (HTTP/3 listens on its port, over UDP)")
	}
	if t.HTTP3 && t.ProxyProtocol.Enabled {
		p.add("tls.http3", "cannot take tls.proxy_protocol: a PROXY header cannot precede QUIC, so every HTTP/3 client would have the relay's address; turn one of them off")
	}
	t.ProxyProtocol.validate(p, "tls.proxy_protocol")
	c.H2C.ProxyProtocol.validate(p, "h2c.proxy_protocol")
	if c.H2C.Listen != "" {
		if _, ok := p.listen("h2c.listen", c.H2C.Listen); ok {
			if other, dup := others[c.H2C.Listen]; dup {
				p.add("h2c.listen", "must differ from "+other)
			}
		}
	}
}

// files checks, when read is set, that the certificate and key given
// are files.
func (p *problems) files(path, cert, key string, read bool) {
	if !read {
		return
	}
	for _, f := range []struct{ key, file string }{{".cert", cert}, {".key", key}} {
		if f.file == "" {
			continue
		}
		if st, err := os.Stat(f.file); err != nil {
			p.add(path+f.key, err.Error())
		} else if !st.Mode().IsRegular() {
			p.add(path+f.key, fmt.Sprintf("%q is not a file", f.file))
		}
	}
}

// checkHSTS returns what is wrong with a Strict-Transport-Security value
// (RFC 6797: max-age required, includeSubDomains and preload allowed),
// or "".
func checkHSTS(v string) string {
	maxAge := false
	for d := range strings.SplitSeq(v, ";") {
		d = strings.TrimSpace(d)
		name, val, hasVal := strings.Cut(d, "=")
		switch strings.ToLower(name) {
		case "":
			continue // RFC 6797 allows empty directives
		case "max-age":
			if _, err := strconv.ParseUint(strings.Trim(val, `"`), 10, 63); err != nil || maxAge {
				return fmt.Sprintf("%q: max-age must be given once, as a number of seconds", v)
			}
			maxAge = true
		case "includesubdomains", "preload":
			if hasVal {
				return fmt.Sprintf("%q: %s takes no value", v, name)
			}
		default:
			return fmt.Sprintf("%q: unknown directive %q (max-age, includeSubDomains, preload)", v, d)
		}
	}
	if !maxAge {
		return fmt.Sprintf("%q has no max-age, like \"max-age=31536000\"", v)
	}
	return ""
}
