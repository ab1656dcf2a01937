package adoption

import (
	"slices"
	"strings"
	"testing"
)

func TestNormalAddrAndHostName(t *testing.T) {
	for in, want := range map[string]string{"80": ":80", "*:80": ":80", "[::]:443": ":443", "0.0.0.0:80": ":80",
		"10.0.0.1:8080": "10.0.0.1:8080", "Localhost:81": "localhost:81", "unix:/x": "", "99999": "", "a:b": ""} {
		if got, ok := NormalAddr(in); got != want || ok != (want != "") {
			t.Errorf("NormalAddr(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for in, want := range map[string]string{"A.Test.": "a.test", "*.a.test": "*.a.test", "_": "", "~^x$": "", "www.a.*": "", "a..test": "", "-a.test": ""} {
		if got, ok := HostName(in); got != want || ok != (want != "") {
			t.Errorf("HostName(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
}

func site(file string, line int, names string, listens ...Listen) Site {
	return Site{Names: strings.Fields(names), Listens: listens, File: file, Line: line, OwnerUID: -1}
}

func TestPlanMergesAnHTTPSRedirectIntoItsTLSSiteAndNotesWhatItCannotMap(t *testing.T) {
	plain, tls := Listen{Addr: ":80"}, Listen{Addr: ":443", TLS: true}
	sites := []Site{
		site("/a.conf", 1, "a.test www.a.test", plain),
		site("/a.conf", 5, "a.test", tls),
		site("/b.conf", 1, "b.test", plain),
		site("/c.conf", 1, "c.test", tls),
		site("/d.conf", 1, "d.test", Listen{Addr: ":8080", File: "/d.conf", Line: 2}),
		site("/e.conf", 1, "e.test", plain),
		site("/e.conf", 9, "e.test", tls),
	}
	sites[0].HTTPSRedirect = true
	sites[1].Cert, sites[1].Key = "/a.crt", "/a.key"
	sites[3].Cert, sites[3].Key = "/c.crt", "/c.key"
	sites[6].Cert, sites[6].Key = "/e.crt", "/e.key"
	p, err := NewPlan(sites, nil, Options{Origin: "127.0.0.1:8081", Exclude: []string{"b.test"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen != ":80" || p.TLSListen != ":443" {
		t.Fatalf("listen %q tls %q", p.Listen, p.TLSListen)
	}
	var got []string
	for _, h := range p.Hosts {
		got = append(got, strings.Join(h.Names, ",")+"/"+h.Cert+"/"+map[bool]string{true: "redirect"}[h.HTTPSRedirect]+map[bool]string{true: "/excluded"}[h.Excluded])
	}
	want := "a.test,www.a.test//a.crt/redirect b.test///excluded c.test//c.crt/redirect e.test//e.crt/"
	if strings.Join(got, " ") != want {
		t.Fatalf("hosts\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if !p.Disabled[0] || len(p.Disabled) != 1 {
		t.Errorf("disabled %v, want the redirect block alone", p.Disabled)
	}
	var notes []string
	for _, n := range p.Notes {
		notes = append(notes, n.String())
	}
	all := strings.Join(notes, "\n")
	for _, w := range []string{"/d.conf:2: ramjet takes :80 and :443; this listen on :8080 stays", "/c.conf:1: served over TLS only", "/e.conf:9: serves names of the site at /e.conf:1 on another address"} {
		if !strings.Contains(all, w) {
			t.Errorf("notes lack %q:\n%s", w, all)
		}
	}
	if _, err := NewPlan(sites, nil, Options{Exclude: []string{"nope.test"}}); err == nil || !strings.Contains(err.Error(), "--exclude nope.test: no site has that name") {
		t.Errorf("unknown --exclude: %v", err)
	}
}

func TestApplyEditsRefusesOverlaps(t *testing.T) {
	files := map[string][]byte{"/f": []byte("0123456789")}
	out, err := ApplyEdits(files, []Edit{{File: "/f", Start: 5, End: 6, Text: "x"}, {File: "/f", Start: 2, End: 2, Text: "+"}})
	if err != nil || string(out["/f"]) != "01+234x6789" {
		t.Fatalf("%q %v", out["/f"], err)
	}
	if _, err := ApplyEdits(files, []Edit{{File: "/f", Start: 2, End: 6}, {File: "/f", Start: 4, End: 5}}); err == nil {
		t.Fatal("overlapping edits applied")
	}
}

func TestPlanTakesEveryPlainAddressOfItsPort(t *testing.T) {
	site := func(name string, addrs ...string) Site {
		s := Site{Names: []string{name}}
		for _, a := range addrs {
			s.Listens = append(s.Listens, Listen{Addr: a})
		}
		return s
	}
	p, err := NewPlan([]Site{site("a.test", "127.0.0.1:80", "[::1]:80"), site("b.test", "127.0.0.1:80", "[::1]:80"), site("c.test", "127.0.0.1:8000")}, nil, Options{Origin: "127.0.0.1:8081"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Listen != "127.0.0.1:80" || !slices.Equal(p.ListenAlso, []string{"[::1]:80"}) || !p.Moves("[::1]:80") || p.Moves("127.0.0.1:8000") {
		t.Fatalf("listen %q, also %q", p.Listen, p.ListenAlso)
	}
	if got := p.listenConf(); !slices.Equal(got.([]string), []string{"127.0.0.1:80", "[::1]:80"}) {
		t.Errorf("listen written as %v", got)
	}
}

func TestPlanSplitsAWildcardTheWebServerBindsPerFamily(t *testing.T) {
	site := func(name string, socks ...string) Site {
		s := Site{Names: []string{name}}
		for _, k := range socks {
			s.Listens = append(s.Listens, Listen{Addr: ":80", Socket: k})
		}
		return s
	}
	p, err := NewPlan([]Site{site("a.test", "0.0.0.0:80", "[::]:80"), site("b.test", "0.0.0.0:80")}, nil, Options{Origin: "127.0.0.1:8081"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Listens(), []string{"0.0.0.0:80", "[::]:80"}) || !p.Moves(":80") {
		t.Fatalf("listens %q", p.Listens())
	}
	p, err = NewPlan([]Site{site("a.test", "0.0.0.0:80"), site("b.test", "")}, nil, Options{Origin: "127.0.0.1:8081"})
	if err != nil || !slices.Equal(p.Listens(), []string{":80"}) || p.listenConf() != ":80" {
		t.Fatalf("one socket per address: listens %q (%v)", p.Listens(), err)
	}
}
