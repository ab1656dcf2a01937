package conf

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestHostInheritsDefaults(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want func(s *Site)
	}{
		{"unset keys come from defaults",
			"hosts:\n  - names: [a.test]\n",
			func(s *Site) {}},
		{"host key overrides default",
			"hosts:\n  - names: [a.test]\n    default_ttl: 5m\n",
			func(s *Site) { s.DefaultTTL = Duration(5 * time.Minute) }},
		{"changed defaults are inherited",
			"defaults:\n  grace: 1m\nhosts:\n  - names: [a.test]\n",
			func(s *Site) { s.Grace = Duration(time.Minute) }},
		{"defaults after hosts in the file still apply",
			"hosts:\n  - names: [a.test]\ndefaults:\n  cache: false\n",
			func(s *Site) { s.Cache = false }},
		{"lists replace, not append",
			"hosts:\n  - names: [a.test]\n    drop_query_params: [ref]\n",
			func(s *Site) { s.DropQueryParams = []string{"ref"} }},
		{"empty list clears an inherited list",
			"hosts:\n  - names: [a.test]\n    bypass_cookies: []\n",
			func(s *Site) { s.BypassCookies = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.doc), "ramjet.yaml")
			if err != nil {
				t.Fatal(err)
			}
			want := cfg.Defaults.clone()
			tt.want(&want)
			if len(cfg.Hosts) != 1 || !reflect.DeepEqual(cfg.Hosts[0].Site, want) {
				t.Fatalf("hosts = %+v\nwant site %+v", cfg.Hosts, want)
			}
		})
	}
}

func TestHostListsDoNotAliasDefaults(t *testing.T) {
	cfg, err := Parse([]byte("hosts:\n  - names: [a.test]\n"), "ramjet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Hosts[0].BypassCookies[0] = "changed"
	if cfg.Defaults.BypassCookies[0] == "changed" {
		t.Fatal("host and defaults share a list")
	}
}

func TestHostNamesAreLowerCased(t *testing.T) {
	cfg, err := Parse([]byte("hosts:\n  - names: [Example.COM, \"*.Example.com\"]\n"), "ramjet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Hosts[0].Names; !reflect.DeepEqual(got, []string{"example.com", "*.example.com"}) {
		t.Fatalf("Names = %q", got)
	}
}

func TestHostProblemsAreReported(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"duplicate name across hosts, case-insensitive",
			"hosts:\n  - names: [a.test]\n  - names:\n      - b.test\n      - A.test\n",
			[]string{`ramjet.yaml:5: hosts[1].names[1]: "a.test" is already listed at hosts[0].names[0]`}},
		{"missing names",
			"hosts:\n  - default_ttl: 1s\n",
			[]string{`ramjet.yaml:2: hosts[0].names: must list at least one host name`}},
		{"empty name",
			"hosts:\n  - names: [\"\"]\n",
			[]string{`ramjet.yaml:2: hosts[0].names[0]: must not be empty`}},
		{"star inside name",
			"hosts:\n  - names: [\"a.*.test\"]\n",
			[]string{`ramjet.yaml:2: hosts[0].names[0]: "a.*.test": "*" is only allowed as a leading "*."`}},
		{"name with port",
			"hosts:\n  - names: [\"a.test:80\"]\n",
			[]string{`ramjet.yaml:2: hosts[0].names[0]: "a.test:80" is not a host name (no port, no trailing dot)`}},
		{"unknown key in host",
			"hosts:\n  - names: [a.test]\n    ttl: 1s\n",
			[]string{`ramjet.yaml:3: hosts[0].ttl: unknown key`}},
		{"names is not a defaults key",
			"defaults:\n  names: [a.test]\n",
			[]string{`ramjet.yaml:2: defaults.names: unknown key`}},
		{"bad host setting",
			"hosts:\n  - names: [a.test]\n    grace: -1s\n",
			[]string{`ramjet.yaml:3: hosts[0].grace: -1s is negative`}},
		{"bad default reported once, not per host",
			"defaults:\n  vary_cookies: [\"a*b\"]\nhosts:\n  - names: [a.test]\n  - names: [b.test]\n",
			[]string{`ramjet.yaml:2: defaults.vary_cookies[0]: "a*b": "*" may only end a pattern`}},
		{"cache share under 1MiB",
			"hosts:\n  - names: [a.test]\n    cache_size: 512KiB\n",
			[]string{`ramjet.yaml:3: hosts[0].cache_size: must be at least 1MiB, got 512KiB`}},
		{"site token without the operator's",
			"hosts:\n  - names: [a.test]\n    admin_token: token-a\n",
			[]string{`ramjet.yaml:3: hosts[0].admin_token: site tokens need admin.token set too (the operator's)`}},
		{"two sites with one token",
			"admin:\n  token: op\nhosts:\n  - names: [a.test]\n    admin_token: same-token\n  - names: [b.test]\n    admin_token: same-token\n",
			[]string{`ramjet.yaml:7: hosts[1].admin_token: the same token as hosts[0].admin_token: a token names one site`}},
		{"site token with white space",
			"admin:\n  token: op\nhosts:\n  - names: [a.test]\n    admin_token: \"a b\"\n",
			[]string{`ramjet.yaml:5: hosts[0].admin_token: must not contain white space or control characters`}},
		{"site token twice",
			"admin:\n  token: op\nhosts:\n  - names: [a.test]\n    admin_token: t1\n    admin_token_file: /nonexistent\n",
			[]string{`ramjet.yaml:6: hosts[0].admin_token_file: give admin_token or admin_token_file, not both`}},
		{"hosts not a list",
			"hosts:\n  names: [a.test]\n",
			[]string{`ramjet.yaml:1: hosts: expected a list, got a mapping`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemLines(t, errOf(Parse([]byte(tt.doc), "ramjet.yaml")))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestHostNamePatterns(t *testing.T) {
	good := []string{"example.com", "*.example.com", "localhost", "127.0.0.1", "a-b.c_d.test", "xn--bcher-kva.example"}
	bad := []string{"", "*", "*.", "Example.com", "a..b", "a.", ".a", "-a.test", "a-.test", "*.*.a", "a b", "a/b", strings.Repeat("a", 64) + ".test"}
	for _, name := range good {
		if msg := checkHostPattern(name); msg != "" {
			t.Errorf("checkHostPattern(%q) = %q, want ok", name, msg)
		}
	}
	for _, name := range bad {
		if checkHostPattern(name) == "" {
			t.Errorf("checkHostPattern(%q) accepted", name)
		}
	}
}
