package apache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/adoption"
)

// readConfig reads main (with its includes) as Load does, with the
// virtual hosts at vhosts in effect, without running Apache.
func readConfig(t *testing.T, dir string, files map[string]string, vhosts ...string) *Config {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rt := &Runtime{ServerRoot: dir, VirtualHosts: map[string]bool{}}
	for _, v := range vhosts {
		rt.VirtualHosts[filepath.Join(dir, v)] = true
	}
	c := &Config{Main: filepath.Join(dir, "apache2.conf"), Runtime: rt, Files: map[string][]byte{}}
	tree, err := c.parseFile(c.Main, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.Tree = tree
	c.read(map[string]string{"/run/php/a.sock": "www-data"})
	if err := c.checkDuplicates(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEditsMoveNameBasedVHostsAndCopyATLSSitePlain(t *testing.T) {
	dir := t.TempDir()
	c := readConfig(t, dir, map[string]string{
		"apache2.conf": "Listen 80\n<IfModule ssl_module>\n\tListen 443\n</IfModule>\n<Directory /srv/a>\n\tAllowOverride All\n</Directory>\nIncludeOptional sites/*.conf\n",
		"sites/a.conf": "<VirtualHost *:80>\n\tServerName a.test\n\tRedirect permanent / https://a.test/\n</VirtualHost>\n" +
			"<VirtualHost *:443>\n\tServerName a.test\n\tDocumentRoot /srv/a\n\tSSLEngine on\n\tSSLCertificateFile /c.pem\n\t<FilesMatch \\.php$>\n\t\tSetHandler \"proxy:unix:/run/php/a.sock|fcgi://localhost\"\n\t</FilesMatch>\n</VirtualHost>\n",
		"sites/b.conf": "<VirtualHost *:80>\n\tServerName b.test\n\tServerAlias www.b.test\n\tDocumentRoot /srv/b\n</VirtualHost>\n",
	}, "sites/a.conf:1", "sites/a.conf:5", "sites/b.conf:1")
	sites := c.Sites()
	if len(sites) != 3 || !sites[0].HTTPSRedirect || sites[1].Cert != "/c.pem" || sites[1].Key != "/c.pem" || sites[1].HtaccessRoot != "/srv/a" ||
		sites[1].PHP.User != "www-data" || sites[2].HtaccessRoot != "" || strings.Join(sites[2].Names, " ") != "b.test www.b.test" {
		t.Fatalf("sites %+v", sites)
	}
	p, err := adoption.NewPlan(sites, c.Notes, adoption.Options{Origin: "127.0.0.1:8081"})
	if err != nil {
		t.Fatal(err)
	}
	moved, err := adoption.ApplyEdits(c.Files, c.Edits("/mods")(p, adoption.Moved))
	if err != nil {
		t.Fatal(err)
	}
	a := string(moved[filepath.Join(dir, "sites/a.conf")])
	for _, want := range []string{"# <VirtualHost *:80>", "# <VirtualHost *:443>", "<VirtualHost 127.0.0.1:8081>\n\t<IfModule setenvif_module>\n\t\tSetEnvIf X-Forwarded-Proto \"^https$\" HTTPS=on",
		"# SSLEngine on", "\tDocumentRoot /srv/a\n"} {
		if !strings.Contains(a, want) {
			t.Errorf("a.conf lacks %q:\n%s", want, a)
		}
	}
	if n := strings.Count(a, "\n<VirtualHost"); n != 1 {
		t.Errorf("a.conf has %d live vhosts, want the plain copy alone:\n%s", n, a)
	}
	if b := string(moved[filepath.Join(dir, "sites/b.conf")]); !strings.HasPrefix(b, "# ramjet adopt: the origin ramjet forwards to\n<VirtualHost 127.0.0.1:8081>\n") {
		t.Errorf("b.conf:\n%s", b)
	}
	main := string(moved[filepath.Join(dir, "apache2.conf")])
	for _, want := range []string{"Listen 127.0.0.1:8081\n# ramjet adopt: ramjet serves this address now\n# Listen 80\n", "# Listen 443", "LoadModule remoteip_module /mods/mod_remoteip.so", "RemoteIPInternalProxy 127.0.0.1 ::1"} {
		if !strings.Contains(main, want) {
			t.Errorf("apache2.conf lacks %q:\n%s", want, main)
		}
	}
	both, err := adoption.ApplyEdits(c.Files, c.Edits("/mods")(p, adoption.Both))
	if err != nil {
		t.Fatal(err)
	}
	if b := string(both[filepath.Join(dir, "sites/b.conf")]); !strings.Contains(b, "<VirtualHost *:80 127.0.0.1:8081>") {
		t.Errorf("b.conf while both serve:\n%s", b)
	}
}
