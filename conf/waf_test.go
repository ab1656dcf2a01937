package conf

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWAFBlockRejectsBadValuesWithTheirLine(t *testing.T) {
	dir := t.TempDir()
	bigPage := filepath.Join(dir, "big.html")
	if err := os.WriteFile(bigPage, make([]byte, WAFMaxPage+1), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, yaml, want string
	}{
		{"mode", "defaults:\n  waf:\n    mode: on\n", `t.yaml:3: defaults.waf.mode: "on" is not one of off, detect, block`},
		{"paranoia", "defaults:\n  waf:\n    paranoia: 5\n", "t.yaml:3: defaults.waf.paranoia: must be 1 to 4, got 5"},
		{"threshold", "defaults:\n  waf:\n    inbound_threshold: 0\n", "t.yaml:3: defaults.waf.inbound_threshold: must be at least 1"},
		{"exclusion", "defaults:\n  waf:\n    exclusions: [drupal]\n", `t.yaml:3: defaults.waf.exclusions[0]: "drupal" is not one of wordpress`},
		{"exclusion twice", "defaults:\n  waf:\n    exclusions:\n      - wordpress\n      - wordpress\n", `t.yaml:5: defaults.waf.exclusions[1]: "wordpress" is already listed`},
		{"relative rules", "defaults:\n  waf:\n    rules: [site.conf]\n", `t.yaml:3: defaults.waf.rules[0]: "site.conf" must be an absolute path`},
		{"missing rules", "defaults:\n  waf:\n    rules_before_crs:\n      - " + dir + "/none.conf\n", "t.yaml:4: defaults.waf.rules_before_crs[0]: stat " + dir + "/none.conf: no such file"},
		{"rules dir", "defaults:\n  waf:\n    rules: [" + dir + "]\n", "t.yaml:3: defaults.waf.rules[0]: \"" + dir + "\" is not a file"},
		{"allow", "defaults:\n  waf:\n    allow: [10.0.0.0/33]\n", `t.yaml:3: defaults.waf.allow[0]: "10.0.0.0/33" is not an address or CIDR network`},
		{"body limit", "defaults:\n  waf:\n    body_limit: 65MiB\n", "t.yaml:3: defaults.waf.body_limit: must be at most 64MiB"},
		{"small body limit", "defaults:\n  waf:\n    body_limit: 10\n", "t.yaml:3: defaults.waf.body_limit: must be at least 1KiB"},
		{"body action", "defaults:\n  waf:\n    body_limit_action: drop\n", `t.yaml:3: defaults.waf.body_limit_action: "drop" is not one of reject, pass`},
		{"status", "defaults:\n  waf:\n    status: 200\n", "t.yaml:3: defaults.waf.status: must be a 4xx or 5xx status, got 200"},
		{"page too large", "defaults:\n  waf:\n    page: " + bigPage + "\n", "t.yaml:3: defaults.waf.page: \"" + bigPage + "\" is larger than 64KiB"},
		{"unknown key", "defaults:\n  waf:\n    engine: on\n", "t.yaml:3: defaults.waf.engine: unknown key"},
		{"host", "hosts:\n  - names: [a.example]\n    waf:\n      mode: block\n      paranoia: 0\n", "t.yaml:5: hosts[0].waf.paranoia: must be 1 to 4, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "t.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v\nwant an error containing %q", err, tt.want)
			}
		})
	}
}

func TestHostWAFOverlaysDefaultsKeyByKey(t *testing.T) {
	cfg, err := Parse([]byte(`
defaults:
  waf:
    mode: detect
    paranoia: 2
    exclusions: [wordpress]
hosts:
  - names: [shop.example]
    waf:
      mode: block
      allow: [192.0.2.0/24]
  - names: [blog.example]
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	shop, blog := cfg.Hosts[0].WAF, cfg.Hosts[1].WAF
	want := defaultWAF()
	want.Mode, want.Paranoia, want.Exclusions, want.Allow = "block", 2, []string{"wordpress"}, []string{"192.0.2.0/24"}
	if !reflect.DeepEqual(shop, want) {
		t.Errorf("shop waf = %+v\nwant %+v", shop, want)
	}
	if blog.Mode != "detect" || blog.Paranoia != 2 || !blog.On() {
		t.Errorf("blog waf = %+v, want the defaults' detect at paranoia 2", blog)
	}
	if cfg.Defaults.WAF.Allow != nil {
		t.Error("a host's allow list leaked into the defaults")
	}
}

func TestWAFIsOffByDefault(t *testing.T) {
	if w := Default().Defaults.WAF; w.On() || w.Mode != "off" {
		t.Fatalf("default waf = %+v, want off", w)
	}
}

func TestErrorAtNamesTheKeysLine(t *testing.T) {
	data := []byte("listen: \":80\"\nhosts:\n  - names: [a.example]\n    waf:\n      rules:\n        - /etc/ramjet/a.conf\n")
	cause := errors.New("line 3: unknown directive")
	e := ErrorAt(data, "r.yaml", "hosts[0].waf.rules[0]", cause)
	if got, want := e.Error(), "r.yaml:6: hosts[0].waf.rules[0]: line 3: unknown directive"; got != want {
		t.Fatalf("ErrorAt = %q, want %q", got, want)
	}
	if !errors.Is(e, cause) {
		t.Fatal("ErrorAt does not wrap its cause")
	}
}
