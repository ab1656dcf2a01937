package conf

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
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
		{name: "env name passed from ramjet's", set: func(d *Docroot) { d.PHP.Env = []string{"JUSTNAME"} }},
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

// TestCheckRefusesPHPAsRamjetOrSharedBetweenSites: a docroot site's PHP
// needs a user of its own: not none, not root, not the user or group
// ramjet runs as (the test's), and not another site's unless both say
// php.shared_user.
func TestCheckRefusesPHPAsRamjetOrSharedBetweenSites(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	me, err := user.LookupId(strconv.Itoa(os.Geteuid()))
	if err != nil {
		t.Fatal(err)
	}
	other := "nobody"
	if me.Username == other {
		other = "daemon"
	}
	ou, err := user.Lookup(other)
	if err != nil {
		t.Fatal(err)
	}
	otherGroup := ou.Gid
	// Run as root (the e2e's TestCheckRefusesPHPAsRamjetsOwnUser runs
	// check as another user), ramjet's own user and group are root's.
	ownUser := "hosts[0].docroot.php.user: \"" + me.Username + "\" (uid " + me.Uid + ") is the user ramjet runs as"
	ownGroup := "hosts[0].docroot.php.group: gid " + strconv.Itoa(os.Getegid()) + " is the group ramjet runs as"
	if os.Geteuid() == 0 {
		ownUser = "hosts[0].docroot.php.user: \"root\" is root"
	}
	if os.Getegid() == 0 {
		ownGroup = "hosts[0].docroot.php.group: gid 0 (root's group)"
	}
	site := func(root, php string) string {
		return "    docroot:\n      root: " + root + "\n      php: {" + php + "}\n"
	}
	tests := []struct {
		name string
		yaml string
		want []string // "" in the list: valid
	}{
		{"one site with its own user", "hosts:\n  - names: [a.test]\n" + site(a, "user: "+other+", group: "+otherGroup), nil},
		{"no user", "hosts:\n  - names: [a.test]\n" + site(a, `user: ""`), []string{"t.yaml:5: hosts[0].docroot.php.user: must name the user"}},
		{"unknown user", "hosts:\n  - names: [a.test]\n" + site(a, "user: no-such-user-x"), []string{"hosts[0].docroot.php.user: no user \"no-such-user-x\""}},
		{"root", "hosts:\n  - names: [a.test]\n" + site(a, "user: root"), []string{"hosts[0].docroot.php.user: \"root\" is root"}},
		{"ramjet's own user", "hosts:\n  - names: [a.test]\n" + site(a, "user: "+me.Username+", group: "+otherGroup), []string{ownUser}},
		{"ramjet's own group", "hosts:\n  - names: [a.test]\n" + site(a, "user: "+other+", group: \""+strconv.Itoa(os.Getegid())+"\""),
			[]string{ownGroup}},
		{"two sites, one user", "hosts:\n  - names: [a.test]\n" + site(a, "user: "+other) + "  - names: [b.test]\n" + site(b, "user: "+other),
			[]string{"t.yaml:5: hosts[0].docroot.php.user: \"" + other + "\" also runs the PHP of hosts[1]", "t.yaml:9: hosts[1].docroot.php.user: \"" + other + "\" also runs the PHP of hosts[0]"}},
		{"two sites, one user, one says shared", "hosts:\n  - names: [a.test]\n" + site(a, "user: "+other+", shared_user: true") + "  - names: [b.test]\n" + site(b, "user: "+other),
			[]string{"hosts[1].docroot.php.user: \"" + other + "\" also runs the PHP of hosts[0]"}},
		{"two sites, one user, both say shared", "hosts:\n  - names: [a.test]\n" + site(a, "user: "+other+", shared_user: true") + "  - names: [b.test]\n" + site(b, "user: "+other+", shared_user: true"), nil},
		{"two names, one root", "hosts:\n  - names: [a.test]\n" + site(a, "user: "+other) + "  - names: [b.test]\n" + site(a, "user: "+other), nil},
		{"the defaults' root and a host's own, one user", "defaults:\n  docroot:\n    root: " + a + "\n    php: {user: " + other + "}\nhosts:\n  - names: [b.test]\n    docroot: {root: " + b + "}\n",
			[]string{"defaults.docroot.php.user: \"" + other + "\" also runs the PHP of hosts[0]", "hosts[0].docroot.php.user: \"" + other + "\" also runs the PHP of defaults"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "t.yaml")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Parse:\n%s\nerr %v, want ok", tt.yaml, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse:\n%s\nok, want %q", tt.yaml, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse:\n%s\nerr %v\nwant %q", tt.yaml, err, w)
				}
			}
			if n := len(flatten(err)); n != len(tt.want) {
				t.Errorf("%d problems, want %d: %v", n, len(tt.want), err)
			}
		})
	}
}
