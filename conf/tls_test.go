package conf

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseTLSSection(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.crt", "a.key", "b.crt", "b.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("pem"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	doc := strings.ReplaceAll(`
tls:
  listen: ":8443"
  cert: DIR/a.crt
  key: DIR/a.key
  hosts:
    - names: [Shop.Example, "*.shop.example"]
      cert: DIR/b.crt
      key: DIR/b.key
  ocsp: false
  h2_max_streams: 100
  http3: true
  h3_max_streams: 50
  h3_0rtt: false
  h3_stream_window: 1MiB
  h3_conn_window: 4MiB
h2c:
  listen: "127.0.0.1:8082"
  behind_tls: true
hosts:
  - names: [shop.example]
    https_redirect: true
    hsts: "max-age=31536000; includeSubDomains"
    alt_svc: false
`, "DIR", dir)
	cfg, err := Parse([]byte(doc), "ramjet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := TLS{Listen: ":8443", Cert: dir + "/a.crt", Key: dir + "/a.key",
		Hosts:       []TLSHost{{Names: []string{"shop.example", "*.shop.example"}, Cert: dir + "/b.crt", Key: dir + "/b.key"}},
		OCSPTimeout: Duration(10 * time.Second), H2MaxStreams: 100, ProxyProtocol: defaultProxyProtocol(),
		HTTP3: true, H3MaxStreams: 50, H3StreamWindow: 1 << 20, H3ConnWindow: 4 << 20}
	if !reflect.DeepEqual(cfg.TLS, want) {
		t.Errorf("tls = %+v\nwant %+v", cfg.TLS, want)
	}
	if !reflect.DeepEqual(cfg.H2C, H2C{Listen: "127.0.0.1:8082", BehindTLS: true, ProxyProtocol: defaultProxyProtocol()}) {
		t.Errorf("h2c = %+v", cfg.H2C)
	}
	if h := cfg.Hosts[0]; !h.HTTPSRedirect || h.HSTS != "max-age=31536000; includeSubDomains" || cfg.Defaults.HTTPSRedirect {
		t.Errorf("host https_redirect/hsts = %v/%q, defaults %v", h.HTTPSRedirect, h.HSTS, cfg.Defaults.HTTPSRedirect)
	}
	if cfg.Hosts[0].AltSvc || !cfg.Defaults.AltSvc {
		t.Errorf("alt_svc: host %v, defaults %v", cfg.Hosts[0].AltSvc, cfg.Defaults.AltSvc)
	}
}

func TestParseTLSProblemsWithLines(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"listener without certificates", "tls:\n  listen: \":8443\"\n",
			[]string{`ramjet.yaml:2: tls.listen: needs a default certificate (tls.cert and tls.key) or tls.hosts`}},
		{"missing files", "tls:\n  listen: \":8443\"\n  cert: DIR/no.crt\n  key: DIR/no.key\n",
			[]string{
				"ramjet.yaml:3: tls.cert: stat DIR/no.crt: no such file or directory",
				"ramjet.yaml:4: tls.key: stat DIR/no.key: no such file or directory",
			}},
		{"cert without key", "tls:\n  cert: /x.crt\n",
			[]string{`ramjet.yaml:1: tls: cert and key must be set together`}},
		{"same address as the main listener", "listen: \":8080\"\ntls:\n  listen: \":8080\"\n  cert: DIR\n  key: DIR\n",
			[]string{
				`ramjet.yaml:3: tls.listen: must differ from listen`,
				`ramjet.yaml:4: tls.cert: "DIR" is not a file`,
				`ramjet.yaml:5: tls.key: "DIR" is not a file`,
			}},
		{"host entry problems", "tls:\n  hosts:\n    - names: [\"a.*.test\"]\n      cert: /a.crt\n    - names: []\n      cert: /b.crt\n      key: /b.key\n",
			[]string{
				`ramjet.yaml:3: tls.hosts[0].names[0]: "a.*.test": "*" is only allowed as a leading "*."`,
				`ramjet.yaml:3: tls.hosts[0]: needs both cert and key`,
				`ramjet.yaml:5: tls.hosts[1].names: must list at least one host name`,
			}},
		{"duplicate name", "tls:\n  hosts:\n    - names: [a.test]\n      cert: /a\n      key: /a\n    - names: [A.test]\n      cert: /b\n      key: /b\n",
			[]string{`ramjet.yaml:6: tls.hosts[1].names[0]: "a.test" is already listed at tls.hosts[0].names[0]`}},
		{"hosts not a list", "tls:\n  hosts: {names: [a]}\n",
			[]string{`ramjet.yaml:2: tls.hosts: expected a list, got a mapping`}},
		{"unknown key in a host entry", "tls:\n  hosts:\n    - names: [a.test]\n      crt: /a\n",
			[]string{`ramjet.yaml:3: tls.hosts[0]: needs both cert and key`, `ramjet.yaml:4: tls.hosts[0].crt: unknown key`}},
		{"zero streams and timeout", "tls:\n  ocsp_timeout: 0s\n  h2_max_streams: 0\n",
			[]string{
				`ramjet.yaml:2: tls.ocsp_timeout: must be positive, got 0s`,
				`ramjet.yaml:3: tls.h2_max_streams: must be at least 1, got 0`,
			}},
		{"http3 without a TLS listener, zero streams", "tls:\n  http3: true\n  h3_max_streams: 0\n",
			[]string{
				`ramjet.yaml:2: tls.http3: needs tls.listen (HTTP/3 listens on its port, over UDP)`,
				`ramjet.yaml:3: tls.h3_max_streams: must be at least 1, got 0`,
			}},
		{"h3 windows too small", "tls:\n  h3_stream_window: 1KiB\n  h3_conn_window: 8KiB\n",
			[]string{
				`ramjet.yaml:2: tls.h3_stream_window: must be at least 16KiB, got 1KiB`,
				`ramjet.yaml:3: tls.h3_conn_window: must be at least 16KiB, got 8KiB`,
			}},
		{"h3 connection window below the stream window", "tls:\n  h3_stream_window: 8MiB\n  h3_conn_window: 4MiB\n",
			[]string{`ramjet.yaml:3: tls.h3_conn_window: must be at least 8MiB, got 4MiB`}},
		{"http3 with the PROXY protocol", "tls:\n  listen: \":8443\"\n  cert: DIR\n  key: DIR\n  http3: true\n  proxy_protocol: {enabled: true, allow: [10.0.0.1]}\n",
			[]string{
				`ramjet.yaml:3: tls.cert: "DIR" is not a file`,
				`ramjet.yaml:4: tls.key: "DIR" is not a file`,
				`ramjet.yaml:5: tls.http3: cannot take tls.proxy_protocol: a PROXY header cannot precede QUIC, so every HTTP/3 client would have the relay's address; turn one of them off`,
			}},
		{"h2c on the admin address", "h2c:\n  listen: \"127.0.0.1:9090\"\n  behind_tls: yes\n",
			[]string{
				`ramjet.yaml:2: h2c.listen: must differ from admin.listen`,
				`ramjet.yaml:3: h2c.behind_tls: "yes" is not true or false`,
			}},
		{"hsts without max-age", "defaults:\n  hsts: includeSubDomains\n",
			[]string{`ramjet.yaml:2: defaults.hsts: "includeSubDomains" has no max-age, like "max-age=31536000"`}},
		{"hsts bad max-age on a host", "hosts:\n  - names: [a.test]\n    hsts: max-age=1y\n",
			[]string{`ramjet.yaml:3: hosts[0].hsts: "max-age=1y": max-age must be given once, as a number of seconds`}},
		{"hsts unknown directive", "defaults:\n  hsts: \"max-age=60; always\"\n",
			[]string{`ramjet.yaml:2: defaults.hsts: "max-age=60; always": unknown directive "always" (max-age, includeSubDomains, preload)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.ReplaceAll(tt.doc, "DIR", dir)
			got := problemLines(t, errOf(Parse([]byte(doc), "ramjet.yaml")))
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.ReplaceAll(w, "DIR", dir)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestCheckHSTSAcceptsRFC6797Values(t *testing.T) {
	for _, v := range []string{"max-age=0", "max-age=31536000", "max-age=63072000; includeSubDomains; preload",
		`max-age="600"`, "includesubdomains; MAX-AGE=5", "max-age=5;"} {
		if msg := checkHSTS(v); msg != "" {
			t.Errorf("checkHSTS(%q) = %s", v, msg)
		}
	}
}
