package conf

import (
	"strings"
	"testing"
)

func TestHostAccessLogOverlaysTheTopLevelOne(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []AccessLog // top level, then each host
	}{
		{"off by default", "hosts:\n  - names: [a.test]\n",
			[]AccessLog{{Format: "combined"}, {Format: "combined"}}},
		{"a host inherits the top-level file",
			"access_log:\n  path: /var/log/ramjet/access.log\nhosts:\n  - names: [a.test]\n",
			[]AccessLog{{Path: "/var/log/ramjet/access.log", Format: "combined"}, {Path: "/var/log/ramjet/access.log", Format: "combined"}}},
		{"a host names its own file, key by key",
			"access_log:\n  path: stdout\n  format: json\nhosts:\n  - names: [a.test]\n    access_log:\n      path: /var/log/a.log\n",
			[]AccessLog{{Path: "stdout", Format: "json"}, {Path: "/var/log/a.log", Format: "json"}}},
		{"access_log: off in a host",
			"access_log:\n  path: /var/log/all.log\nhosts:\n  - names: [a.test]\n    access_log: off\n",
			[]AccessLog{{Path: "/var/log/all.log", Format: "combined"}, {Format: "combined"}}},
		{"a host naming a file under a top-level off",
			"access_log: off\nhosts:\n  - names: [a.test]\n    access_log: {path: /var/log/a.log}\n",
			[]AccessLog{{Format: "combined"}, {Path: "/var/log/a.log", Format: "combined"}}},
		{"two hosts share a file in one format",
			"hosts:\n  - names: [a.test]\n    access_log: {path: /var/log/shared.log, format: ramjet}\n" +
				"  - names: [b.test]\n    access_log: {path: /var/log/shared.log, format: ramjet}\n",
			[]AccessLog{{Format: "combined"}, {Path: "/var/log/shared.log", Format: "ramjet"}, {Path: "/var/log/shared.log", Format: "ramjet"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.doc), "ramjet.yaml")
			if err != nil {
				t.Fatal(err)
			}
			got := []AccessLog{cfg.AccessLog}
			for _, h := range cfg.Hosts {
				got = append(got, h.AccessLog)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("access logs %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("access log %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestBadAccessLogsAreReportedAtTheirLine(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown format", "access_log:\n  path: /var/log/a.log\n  format: apache\n",
			`ramjet.yaml:3: access_log.format: "apache" is not one of combined, ramjet, json, off`},
		{"unknown format in a host", "hosts:\n  - names: [a.test]\n    access_log:\n      format: nginx\n",
			`ramjet.yaml:4: hosts[0].access_log.format: "nginx" is not one of combined, ramjet, json, off`},
		{"relative path", "access_log:\n  path: logs/access.log\n",
			`ramjet.yaml:2: access_log.path: "logs/access.log" must be an absolute path, or "stdout"`},
		{"a directory", "access_log:\n  path: /var/log/\n",
			`ramjet.yaml:2: access_log.path: "/var/log/" is not a file name`},
		{"a scalar other than off", "access_log: on\n",
			`ramjet.yaml:1: access_log: expected a mapping, got "on"`},
		{"one file in two formats", "access_log:\n  path: /var/log/all.log\nhosts:\n  - names: [a.test]\n    access_log:\n      format: json\n",
			`ramjet.yaml:6: hosts[0].access_log.format: "/var/log/all.log" is written in combined (access_log): one file takes one format`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "ramjet.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse: %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestAccessLogOn(t *testing.T) {
	for _, tt := range []struct {
		a  AccessLog
		on bool
	}{
		{AccessLog{Format: "combined"}, false},
		{AccessLog{Path: "stdout", Format: "off"}, false},
		{AccessLog{Path: "stdout"}, true},
		{AccessLog{Path: "/var/log/a.log", Format: "json"}, true},
	} {
		if got := tt.a.On(); got != tt.on {
			t.Errorf("%+v.On() = %v, want %v", tt.a, got, tt.on)
		}
	}
}
