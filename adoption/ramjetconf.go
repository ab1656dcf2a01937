package adoption

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// The parts of ramjet's configuration a plan writes (README,
// "Configuration reference"); everything else keeps its default.
type (
	ramjetConf struct {
		Listen any        `yaml:"listen,omitempty"` // an address, or a list
		Admin  adminConf  `yaml:"admin"`
		Origin originConf `yaml:"origin"`
		TLS    *tlsConf   `yaml:"tls,omitempty"`
		Hosts  []hostConf `yaml:"hosts"`
	}
	adminConf struct {
		Listen string `yaml:"listen"`
		Token  string `yaml:"token"`
	}
	originConf struct {
		Servers []string `yaml:"servers"`
	}
	tlsConf struct {
		Listen string        `yaml:"listen"`
		Cert   string        `yaml:"cert"`
		Key    string        `yaml:"key"`
		Hosts  []tlsHostConf `yaml:"hosts,omitempty"`
	}
	tlsHostConf struct {
		Names []string `yaml:"names"`
		Cert  string   `yaml:"cert"`
		Key   string   `yaml:"key"`
	}
	hostConf struct {
		Names          []string `yaml:"names"`
		AdminTokenFile string   `yaml:"admin_token_file"`
		HTTPSRedirect  bool     `yaml:"https_redirect,omitempty"`
		HtaccessRoot   string   `yaml:"htaccess_root,omitempty"`
		Cache          *bool    `yaml:"cache,omitempty"`
	}
)

// listenConf is listen: the address, or the list of them.
func (p *Plan) listenConf() any {
	if len(p.ListenAlso) == 0 {
		if p.Listen == "" {
			return nil
		}
		return p.Listen
	}
	return append([]string{p.listen()}, p.ListenAlso...)
}

// TokenFile is where host h's token is kept.
func (p *Plan) TokenFile(h *Host) string { return filepath.Join(p.TokenDir, h.Names[0]) }

// WriteConfig writes ramjet's configuration for the plan, with the
// notes as comments at its top. operator is admin.token.
func (p *Plan) WriteConfig(w io.Writer, operator string) error {
	c := ramjetConf{Listen: p.listenConf(), Admin: adminConf{Listen: p.Admin, Token: operator},
		Origin: originConf{Servers: []string{"http://" + p.Origin}}}
	if p.TLSListen != "" {
		if p.DefaultCert == "" {
			return fmt.Errorf("the web server serves TLS on %s but no site there names a certificate ramjet can read", p.TLSListen)
		}
		c.TLS = &tlsConf{Listen: p.TLSListen, Cert: p.DefaultCert, Key: p.DefaultKey}
	}
	for i := range p.Hosts {
		h := &p.Hosts[i]
		hc := hostConf{Names: h.Names, AdminTokenFile: p.TokenFile(h), HTTPSRedirect: h.HTTPSRedirect, HtaccessRoot: h.HtaccessRoot}
		if h.Excluded {
			off := false
			hc.Cache = &off
		}
		c.Hosts = append(c.Hosts, hc)
		if h.Cert != "" && c.TLS != nil {
			c.TLS.Hosts = append(c.TLS.Hosts, tlsHostConf{Names: h.Names, Cert: h.Cert, Key: h.Key})
		}
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# ramjet configuration written by `ramjet adopt` from %s.\n", p.Source)
	fmt.Fprintf(&buf, "# The web server moves to %s; ramjet takes %s.\n", p.Origin, p.both())
	if len(p.Notes) > 0 {
		fmt.Fprintf(&buf, "# Not mapped (the web server keeps doing these, or ramjet does not):\n")
		for _, n := range p.Notes {
			fmt.Fprintf(&buf, "#   %s\n", n)
		}
	}
	for _, h := range p.Hosts {
		if h.Excluded {
			fmt.Fprintf(&buf, "# %s is left out (--exclude): ramjet passes it to the web server uncached.\n", h.Names[0])
		}
	}
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("adoption: encode ramjet config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("adoption: encode ramjet config: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}
