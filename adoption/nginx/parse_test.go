package nginx

import (
	"errors"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/adoption"
)

func TestParseKeepsPositionsQuotesAndVariables(t *testing.T) {
	src := "http {\n  # comment ; {\n  server { listen 80 default_server;\n server_name \"a.test\" 'b\\'s' ${x}y; return 301 https://$host$request_uri; }\n}\n"
	ds, err := Parse("/n.conf", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	srv := ds[0].Block[0]
	if srv.Name != "server" || srv.Line != 3 || !srv.IsBlock {
		t.Fatalf("server = %+v", srv)
	}
	names := srv.Block[1]
	if got := strings.Join(names.Args, "|"); got != "a.test|b's|${x}y" || names.Line != 4 {
		t.Fatalf("server_name args %q line %d", got, names.Line)
	}
	if got := src[srv.Start:srv.End]; !strings.HasPrefix(got, "server {") || !strings.HasSuffix(got, "}") {
		t.Fatalf("server span %q", got)
	}
	l := srv.Block[0]
	if got := src[l.Start:l.End]; got != "listen 80 default_server;" {
		t.Fatalf("listen span %q", got)
	}
}

func TestParseRefusesBrokenInputWithFileAndLine(t *testing.T) {
	for src, want := range map[string]string{
		"http {\n server {\n":     "/x.conf:3: nginx syntax: unexpected end of file, expecting \"}\"",
		"listen 80":               "/x.conf:1: nginx syntax: unexpected end of file, expecting \";\" or \"{\" after \"listen\"",
		"a;\n}\n":                 "/x.conf:2: nginx syntax: unexpected \"}\"",
		"a \"b;\n":                "unterminated quoted string",
		"a { b }":                 "/x.conf:1: nginx syntax: unexpected \"}\" in \"b\"",
		strings.Repeat("a{", 100): "nested deeper",
		"\"quoted\" name;":        "cannot be quoted",
		"a;\n;":                   "/x.conf:2: nginx syntax: unexpected \";\"",
	} {
		_, err := Parse("/x.conf", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want %q", src, err, want)
		}
	}
}

func TestDumpExpandsIncludesInNginxOrder(t *testing.T) {
	out := "nginx: the configuration file /e/nginx.conf syntax is ok\n" +
		"# configuration file /e/nginx.conf:\nevents {}\nhttp {\n include sites/*.conf;\n include /e/x.conf;\n}\n\n" +
		"# configuration file /e/sites/b.conf:\nserver { server_name b.test; }\n" +
		"# configuration file /e/sites/a.conf:\nserver {\n server_name a.test; }\n\n" +
		"# configuration file /e/x.conf:\nserver { server_name x.test; }\n"
	d, err := ParseDump([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Files["/e/sites/a.conf"]) != "server {\n server_name a.test; }\n" {
		t.Fatalf("a.conf = %q", d.Files["/e/sites/a.conf"])
	}
	c, err := Read(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range c.Servers {
		got = append(got, s.Site.Names[0]+"@"+s.Site.File)
	}
	if want := "a.test@/e/sites/a.conf b.test@/e/sites/b.conf x.test@/e/x.conf"; strings.Join(got, " ") != want {
		t.Fatalf("servers %v, want %s", got, want)
	}
}

func TestReadRefusesANameDeclaredTwiceOnOneAddress(t *testing.T) {
	out := "# configuration file /e/nginx.conf:\nhttp {\nserver { listen 80; server_name a.test; }\nserver { listen 80; server_name A.test; }\nserver { listen 443 ssl; server_name a.test; }\n}\n"
	d, err := ParseDump([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Read(d, nil)
	if err == nil || !strings.Contains(err.Error(), `/e/nginx.conf:3: server_name "a.test" on :80 is already declared at /e/nginx.conf:2`) {
		t.Fatalf("Read = %v", err)
	}
}

func TestReadNotesWhatRamjetCannotMap(t *testing.T) {
	out := "# configuration file /e/nginx.conf:\nhttp {\nserver {\n listen unix:/s;\n server_name ~^(.+)$ www.a.*;\n listen 443 ssl;\n ssl_verify_client on;\n ssl_certificate /c;\n ssl_certificate_key /k; }\n}\n"
	d, _ := ParseDump([]byte(out))
	c, err := Read(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range c.Notes {
		got = append(got, n.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"/e/nginx.conf:3: listen on a unix socket", `/e/nginx.conf:4: server_name "~^(.+)$"`, `/e/nginx.conf:4: server_name "www.a.*"`, "/e/nginx.conf:6: ssl_verify_client"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"http { server { listen 80; server_name a.test; root /var/www; } }",
		"a \"b\\\"c\" 'd' ${e}f;",
		"location ~ \\.php$ { fastcgi_pass unix:/run/php.sock; }",
		"# c\nx {\n}\n",
		"a \"",
		"}{;",
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
				if d.Start < 0 || d.End > len(src) || d.Start >= d.End || !strings.HasPrefix(src[d.Start:], d.Name) {
					t.Fatalf("directive %q spans %d..%d of %d bytes", d.Name, d.Start, d.End, len(src))
				}
				walk(d.Block)
			}
		}
		walk(ds)
	})
}

func TestEditsGiveEachSharedSocketReuseportOnce(t *testing.T) {
	out := "# configuration file /e/nginx.conf:\nhttp {\nserver { listen 80; listen [::]:80; server_name a.test; }\nserver { listen *:80; listen [::]:80; server_name b.test; }\n}\n"
	d, _ := ParseDump([]byte(out))
	c, err := Read(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := adoption.NewPlan(c.Sites(), c.Notes, adoption.Options{Origin: "127.0.0.1:8081"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := adoption.ApplyEdits(d.Files, c.Edits(p, adoption.Both))
	if err != nil {
		t.Fatal(err)
	}
	got := string(files["/e/nginx.conf"])
	if strings.Count(got, "listen 80 reuseport;") != 1 || strings.Count(got, "listen [::]:80 reuseport;") != 1 || strings.Count(got, "reuseport") != 2 {
		t.Fatalf("reuseport once per socket:\n%s", got)
	}
	if strings.Count(got, "listen 127.0.0.1:8081 default_server;") != 1 || strings.Count(got, "listen 127.0.0.1:8081;") != 1 {
		t.Fatalf("the origin listen, default once:\n%s", got)
	}
}
