package conf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateDocroot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		set  func(d *Docroot)
		want string // "" = valid
	}{
		{name: "existing directory", set: func(d *Docroot) { d.Root = dir }},
		{name: "relative root", set: func(d *Docroot) { d.Root = "www" }, want: "defaults.docroot.root"},
		{name: "missing root", set: func(d *Docroot) { d.Root = filepath.Join(dir, "nope") }, want: "defaults.docroot.root"},
		{name: "root is a file", set: func(d *Docroot) { d.Root = file }, want: "is not a directory"},
		{name: "unknown serve mode", set: func(d *Docroot) { d.Serve = "static" }, want: "defaults.docroot.serve"},
		{name: "index with a slash", set: func(d *Docroot) { d.Index = []string{"a/index.php"} }, want: "defaults.docroot.index[0]"},
		{name: "front controller not a script", set: func(d *Docroot) { d.FrontController = "/index.html" }, want: "front_controller"},
		{name: "front controller climbing", set: func(d *Docroot) { d.FrontController = "/../x.php" }, want: "front_controller"},
		{name: "no front controller", set: func(d *Docroot) { d.FrontController = "" }},
		{name: "no workers", set: func(d *Docroot) { d.PHP.Workers = 0 }, want: "defaults.docroot.php.workers"},
		{name: "min above max", set: func(d *Docroot) { d.PHP.MinWorkers = 9 }, want: "min_workers"},
		{name: "zero queue wait", set: func(d *Docroot) { d.PHP.QueueWait = 0 }, want: "queue_wait"},
		{name: "negative idle suspend", set: func(d *Docroot) { d.PHP.IdleSuspend = -1 }, want: "idle_suspend"},
		{name: "env without value", set: func(d *Docroot) { d.PHP.Env = []string{"JUSTNAME"} }, want: "php.env[0]"},
		{name: "env bad name", set: func(d *Docroot) { d.PHP.Env = []string{"1X=2"} }, want: "php.env[0]"},
		{name: "ini with newline", set: func(d *Docroot) { d.PHP.INI = []string{"a=1\nb=2"} }, want: "php.ini[0]"},
		{name: "unknown engine", set: func(d *Docroot) { d.PHP.Engine = "fpm" }, want: "defaults.docroot.php.engine"},
		{name: "separate engine", set: func(d *Docroot) { d.PHP.Engine = "separate" }},
		{name: "relative ini file", set: func(d *Docroot) { d.PHP.INIFile = "php.ini" }, want: "php.ini_file"},
		{name: "missing ini file", set: func(d *Docroot) { d.PHP.INIFile = filepath.Join(dir, "nope.ini") }, want: "php.ini_file"},
		{name: "ini file is a directory", set: func(d *Docroot) { d.PHP.INIFile = dir }, want: "not a regular file"},
		{name: "ini file", set: func(d *Docroot) { d.PHP.INIFile = file }},
		{name: "good env and ini", set: func(d *Docroot) {
			d.PHP.Env = []string{"APP_ENV=prod"}
			d.PHP.INI = []string{"memory_limit=256M"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.set(&c.Defaults.Docroot)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want ok", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate() = %v, want an error about %s", err, tt.want)
			}
		})
	}
}

func TestHostInheritsDocrootAndOverridesPHP(t *testing.T) {
	dir := t.TempDir()
	c, err := Parse([]byte("defaults:\n  docroot:\n    root: "+dir+"\n    php:\n      workers: 8\nhosts:\n  - names: [a.test]\n    docroot:\n      php:\n        workers: 2\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := c.Hosts[0].Docroot
	if h.Root != dir || h.PHP.Workers != 2 || h.PHP.MaxRequests != 10000 || c.Defaults.Docroot.PHP.Workers != 8 {
		t.Fatalf("host docroot %+v, defaults workers %d", h, c.Defaults.Docroot.PHP.Workers)
	}
}

func TestValidateHtaccessRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		set  func(h *Host)
		want string // "" = valid
	}{
		{name: "a directory", set: func(h *Host) { h.HtaccessRoot = dir }},
		{name: "relative", set: func(h *Host) { h.HtaccessRoot = "www" }, want: "hosts[0].htaccess_root"},
		{name: "missing", set: func(h *Host) { h.HtaccessRoot = filepath.Join(dir, "nope") }, want: "hosts[0].htaccess_root"},
		{name: "a file", set: func(h *Host) { h.HtaccessRoot = file }, want: "is not a directory"},
		{name: "on a docroot site", set: func(h *Host) { h.HtaccessRoot, h.Docroot.Root = dir, dir }, want: "is for proxy mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			h := Host{Names: []string{"a.test"}, Site: c.Defaults.clone()}
			tt.set(&h)
			c.Hosts = []Host{h}
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want ok", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate() = %v, want an error about %s", err, tt.want)
			}
		})
	}
}

func TestHtaccessSwitchReadsOnAndOff(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		value string
		want  bool
		bad   bool
	}{{"on", true, false}, {"off", false, false}, {"true", true, false}, {"false", false, false}, {"maybe", false, true}} {
		name := filepath.Join(dir, tt.value+".yaml")
		if err := os.WriteFile(name, []byte("defaults:\n  docroot:\n    htaccess: "+tt.value+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := Load(name)
		switch {
		case tt.bad && (err == nil || !strings.Contains(err.Error(), ":3: defaults.docroot.htaccess")):
			t.Errorf("%s: error %v, want FILE:LINE about htaccess", tt.value, err)
		case !tt.bad && err != nil:
			t.Errorf("%s: %v", tt.value, err)
		case !tt.bad && bool(cfg.Defaults.Docroot.Htaccess) != tt.want:
			t.Errorf("%s: %v", tt.value, cfg.Defaults.Docroot.Htaccess)
		}
	}
}
