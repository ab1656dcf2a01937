package conf

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseProxyProtocolAndRealIP(t *testing.T) {
	doc := `server:
  proxy_protocol:
    enabled: true
    allow: ["10.0.0.0/8", "192.0.2.7"]
h2c:
  listen: "127.0.0.1:8082"
  behind_tls: true
  proxy_protocol: {enabled: true, allow: ["127.0.0.1"], timeout: 2s}
real_ip:
  from: ["127.0.0.1/32", "::1"]
  header: X-Real-IP
`
	cfg, err := Parse([]byte(doc), "ramjet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := (ProxyProtocol{Enabled: true, Allow: []string{"10.0.0.0/8", "192.0.2.7"}, Timeout: Duration(5 * time.Second)}); !reflect.DeepEqual(cfg.Server.ProxyProtocol, want) {
		t.Errorf("server.proxy_protocol = %+v, want %+v", cfg.Server.ProxyProtocol, want)
	}
	if want := (ProxyProtocol{Enabled: true, Allow: []string{"127.0.0.1"}, Timeout: Duration(2 * time.Second)}); !reflect.DeepEqual(cfg.H2C.ProxyProtocol, want) {
		t.Errorf("h2c.proxy_protocol = %+v, want %+v", cfg.H2C.ProxyProtocol, want)
	}
	if cfg.TLS.ProxyProtocol.Enabled || cfg.Admin.ProxyProtocol.Enabled {
		t.Error("proxy_protocol on where it was not asked for")
	}
	if want := (RealIP{From: []string{"127.0.0.1/32", "::1"}, Header: "X-Real-IP"}); !reflect.DeepEqual(cfg.RealIP, want) {
		t.Errorf("real_ip = %+v, want %+v", cfg.RealIP, want)
	}
}

func TestParseRefusesProxyProtocolAndRealIPThatTrustTooMuch(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"enabled without allow", "server:\n  proxy_protocol:\n    enabled: true\n",
			"ramjet.yaml:2: server.proxy_protocol.allow: must list the networks"},
		{"allow everyone", "server:\n  proxy_protocol:\n    enabled: true\n    allow: [\"0.0.0.0/0\"]\n",
			`ramjet.yaml:4: server.proxy_protocol.allow[0]: "0.0.0.0/0" trusts every address`},
		{"not a network", "tls:\n  proxy_protocol:\n    enabled: true\n    allow: [lb.internal]\n",
			`ramjet.yaml:4: tls.proxy_protocol.allow[0]: "lb.internal" is not an address or CIDR network`},
		{"allow while off", "h2c:\n  proxy_protocol:\n    allow: [\"10.0.0.1\"]\n",
			"ramjet.yaml:3: h2c.proxy_protocol.allow: is set but enabled is false"},
		{"no timeout", "server:\n  proxy_protocol:\n    enabled: true\n    allow: [\"10.0.0.1\"]\n    timeout: 0s\n",
			"ramjet.yaml:5: server.proxy_protocol.timeout:"},
		{"real_ip from everyone", "real_ip:\n  from: [\"::/0\"]\n",
			`ramjet.yaml:2: real_ip.from[0]: "::/0" trusts every address`},
		{"real_ip from a name", "real_ip:\n  from: [proxy]\n",
			`ramjet.yaml:2: real_ip.from[0]: "proxy" is not an address or CIDR network`},
		{"real_ip header not a field name", "real_ip:\n  header: \"X Forwarded\"\n",
			`ramjet.yaml:2: real_ip.header: "X Forwarded" is not a header name`},
		{"unknown key", "real_ip:\n  recursive: true\n", "ramjet.yaml:2: real_ip.recursive: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "ramjet.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse: %v\nwant an error containing %q", err, tt.want)
			}
		})
	}
}
