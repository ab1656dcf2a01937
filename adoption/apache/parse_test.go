package apache

import (
	"errors"
	"strings"
	"testing"
)

func TestParseReadsSectionsContinuationsAndQuotes(t *testing.T) {
	src := "# c\nListen 80\n<VirtualHost *:80 [::]:80>\n  ServerName a.test\n  ServerAlias www.a.test \\\n    b.test\n  CustomLog \"/var/log/a b.log\" combined\n</VirtualHost>\n"
	ds, err := Parse("/a.conf", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	v := ds[1]
	if !v.Is("virtualhost") || v.Line != 3 || strings.Join(v.Args, " ") != "*:80 [::]:80" {
		t.Fatalf("vhost %+v", v)
	}
	if got := src[v.Start:v.HeadEnd]; got != "<VirtualHost *:80 [::]:80>\n" {
		t.Fatalf("head %q", got)
	}
	if got := src[v.Start:v.End]; !strings.HasSuffix(got, "</VirtualHost>\n") {
		t.Fatalf("span %q", got)
	}
	alias := v.Block[1]
	if strings.Join(alias.Args, " ") != "www.a.test b.test" || alias.Line != 5 || src[alias.Start:alias.End] != "ServerAlias www.a.test \\\n    b.test\n" {
		t.Fatalf("alias %+v %q", alias, src[alias.Start:alias.End])
	}
	if v.Block[2].Args[0] != "/var/log/a b.log" {
		t.Fatalf("quoted %q", v.Block[2].Args)
	}
}

func TestParseRefusesBrokenInputWithFileAndLine(t *testing.T) {
	for src, want := range map[string]string{
		"<VirtualHost *:80>\nServerName a\n": "/x.conf:2: apache syntax: <VirtualHost> is not closed",
		"</VirtualHost>\n":                   "/x.conf:1: apache syntax: </VirtualHost> does not close <>",
		"<Directory /x>\n</Files>\n":         "/x.conf:2: apache syntax: </Files> does not close <Directory>",
		"<VirtualHost *:80\n":                "/x.conf:1: apache syntax: section \"<VirtualHost *:80\" lacks its closing \">\"",
		"Header set X \"unterminated\n":      "/x.conf:1: apache syntax: unterminated quoted string",
		strings.Repeat("<If x>\n", 100):      "nested deeper",
		"<>\n":                               "/x.conf:1: apache syntax: a directive or section without a name",
	} {
		_, err := Parse("/x.conf", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want %q", src, err, want)
		}
	}
}

func TestParseRuntimeReadsWhatApacheSays(t *testing.T) {
	out := "VirtualHost configuration:\n127.0.0.1:8080        b.test (/e/sites/a.conf:7)\n*:80    is a NameVirtualHost\n         default server a.test (/e/sites/a.conf:1)\n         port 80 namevhost a.test (/e/sites/a.conf:1)\n                 alias www.a.test\nServerRoot: \"/e\"\nPidFile: \"/run/apache2/apache2.pid\"\n"
	r := ParseRuntime([]byte(out))
	if r.ServerRoot != "/e" || r.PidFile != "/run/apache2/apache2.pid" || !r.VirtualHosts["/e/sites/a.conf:7"] || !r.VirtualHosts["/e/sites/a.conf:1"] || len(r.VirtualHosts) != 2 {
		t.Fatalf("%+v", r)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"<VirtualHost *:80>\n ServerName a.test\n DocumentRoot \"/var/www/a\"\n</VirtualHost>\n",
		"Listen 80\nInclude sites/*.conf\n",
		"a \\\nb\n# c\n<If \"%{HTTPS} == 'on'\">\n</If>\n",
		"</x>",
		"<a\n",
		"x \"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ds, err := Parse("/f.conf", []byte(src))
		if err != nil {
			if !errors.Is(err, ErrSyntax) || !strings.HasPrefix(err.Error(), "/f.conf:") {
				t.Fatalf("error without file:line or ErrSyntax: %v", err)
			}
			return
		}
		var walk func([]*Directive)
		walk = func(ds []*Directive) {
			for _, d := range ds {
				if d.Start < 0 || d.Start > d.HeadEnd || d.HeadEnd > d.End || d.End > len(src) {
					t.Fatalf("directive %q spans %d..%d..%d of %d bytes", d.Name, d.Start, d.HeadEnd, d.End, len(src))
				}
				walk(d.Block)
			}
		}
		walk(ds)
	})
}
