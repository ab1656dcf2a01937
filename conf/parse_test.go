package conf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// problemLines returns the lines of a Parse error, one per problem.
func problemLines(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		t.Fatal("Parse succeeded, want an error")
	}
	return strings.Split(err.Error(), "\n")
}

func TestParseEmptyDocumentIsDefault(t *testing.T) {
	for _, doc := range []string{"", "\n", "# only a comment\n", "---\n", "~\n"} {
		cfg, err := Parse([]byte(doc), "ramjet.yaml")
		if err != nil {
			t.Fatalf("Parse(%q): %v", doc, err)
		}
		if !reflect.DeepEqual(cfg, Default()) {
			t.Fatalf("Parse(%q) = %+v, want Default()", doc, cfg)
		}
	}
}

func TestParseOverlaysDefaults(t *testing.T) {
	doc := `
listen: ":80"
server:
  read_timeout: 5s
  max_request_body: 1MB
cache:
  compress:
    types: ["Text/HTML"]
`
	cfg, err := Parse([]byte(doc), "ramjet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Listen = ":80"
	want.Server.ReadTimeout = Duration(5 * time.Second)
	want.Server.MaxRequestBody = 1000000
	want.Cache.Compress.Types = []string{"text/html"}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got %+v\nwant %+v", cfg, want)
	}
}

func TestParseRejectsUnknownKeyWithLine(t *testing.T) {
	doc := "listen: \":80\"\ncache:\n  sise: 1MiB\nbogus: 1\n"
	got := problemLines(t, errOf(Parse([]byte(doc), "ramjet.yaml")))
	want := []string{
		"ramjet.yaml:3: cache.sise: unknown key",
		"ramjet.yaml:4: bogus: unknown key",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestParseReportsEveryProblemWithItsLine(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"bad size", "cache:\n  size: 12 parsecs\n",
			[]string{`ramjet.yaml:2: cache.size: "12 parsecs" is not a size`}},
		{"bad duration", "server:\n  idle_timeout: soon\n",
			[]string{`ramjet.yaml:2: server.idle_timeout: "soon" is not a duration`}},
		{"bad bool", "cache:\n  compress:\n    gzip: yes\n",
			[]string{`ramjet.yaml:3: cache.compress.gzip: "yes" is not true or false`}},
		{"bad int", "origin:\n  max_conns: lots\n",
			[]string{`ramjet.yaml:2: origin.max_conns: "lots" is not an integer`}},
		{"list where scalar", "admin: {listen: [a, b]}\n",
			[]string{`ramjet.yaml:1: admin.listen: expected a string, got a list`}},
		{"scalar where mapping", "admin: 5\n",
			[]string{`ramjet.yaml:1: admin: expected a mapping, got "5"`}},
		{"scalar where list", "origin:\n  servers: http://a:1\n",
			[]string{`ramjet.yaml:2: origin.servers: expected a list, got "http://a:1"`}},
		{"null duration", "cache:\n  hit_for_pass:\n",
			[]string{`ramjet.yaml:2: cache.hit_for_pass: expected a duration, got nothing`}},
		{"bad list item on its own line", "origin:\n  servers:\n    - http://a:1\n    - [x]\n",
			[]string{`ramjet.yaml:4: origin.servers[1]: expected a string, got a list`}},
		{"duplicate key", "log:\n  level: info\n  level: debug\n",
			[]string{`ramjet.yaml:3: log.level: already set on line 2`}},
		{"non-scalar key", "? [a]\n: 1\n",
			[]string{`ramjet.yaml:1: expected a key name, got a list`}},
		{"top level not a mapping", "- a\n",
			[]string{`ramjet.yaml:1: expected a mapping of keys at top level, got a list`}},
		{"validate error gets key line", "log:\n  format: xml\n",
			[]string{`ramjet.yaml:2: log.format: "xml" is not one of text, json`}},
		{"relational error at the key that was set", "cache:\n  max_object_size: 1GiB\n",
			[]string{`ramjet.yaml:2: cache.max_object_size: 1GiB is larger than cache.size (256MiB)`}},
		{"unset key falls back to enclosing key", "origin:\n  health:\n    interval: 1s\n",
			[]string{`ramjet.yaml:2: origin.health.timeout: 2s is longer than origin.health.interval (1s)`}},
		{"several problems sorted by line", "log:\n  level: loud\ncache:\n  size: 1KiB\n  nope: 1\n",
			[]string{
				`ramjet.yaml:2: log.level: "loud" is not one of debug, info, warn, error`,
				`ramjet.yaml:4: cache.size: must be at least 1MiB, got 1KiB`,
				`ramjet.yaml:5: cache.nope: unknown key`,
			}},
		{"second document", "listen: \":1\"\n---\nlisten: \":2\"\n",
			[]string{`ramjet.yaml:3: only one YAML document is allowed`}},
		{"syntax error", "listen: \":1\"\nlog: c: d\n",
			[]string{`ramjet.yaml:2: mapping values are not allowed in this context`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.doc), "ramjet.yaml")
			if cfg != nil {
				t.Errorf("Parse returned a config with an error")
			}
			got := problemLines(t, err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestParseErrorsAreStructured(t *testing.T) {
	_, err := Parse([]byte("cache:\n  size: huge\n"), "c.yaml")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *conf.Error", err)
	}
	if e.File != "c.yaml" || e.Line != 2 || e.Path != "cache.size" {
		t.Fatalf("got %+v", e)
	}
}

func TestParseAcceptsIntegerSecondsAndBytes(t *testing.T) {
	cfg, err := Parse([]byte("server:\n  read_timeout: 7\n  max_header_bytes: 4096\n"), "ramjet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.ReadTimeout != Duration(7*time.Second) || cfg.Server.MaxHeaderBytes != 4*KiB {
		t.Fatalf("got %v, %v", cfg.Server.ReadTimeout, cfg.Server.MaxHeaderBytes)
	}
}

func TestParseFollowsAliases(t *testing.T) {
	doc := "defaults:\n  vary_cookies: &v [lang]\nhosts:\n  - names: [a.test]\n    vary_cookies: *v\n"
	cfg, err := Parse([]byte(doc), "ramjet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Hosts[0].VaryCookies; !reflect.DeepEqual(got, []string{"lang"}) {
		t.Fatalf("VaryCookies = %q", got)
	}
}

func TestLoadReturnsRawBytes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, good, "listen: \":81\"\n")
	writeFile(t, bad, "listen: [\n")

	cfg, raw, err := Load(good)
	if err != nil || cfg.Listen != ":81" || string(raw) != "listen: \":81\"\n" {
		t.Fatalf("Load(good) = %v, %q, %v", cfg, raw, err)
	}
	cfg, raw, err = Load(bad)
	if err == nil || cfg != nil || !bytes.Equal(raw, []byte("listen: [\n")) {
		t.Fatalf("Load(bad) = %v, %q, %v", cfg, raw, err)
	}
	if !strings.HasPrefix(err.Error(), bad+":") {
		t.Fatalf("Load(bad) error %q does not start with the path", err)
	}
	if _, _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load(missing) error = %v, want os.ErrNotExist", err)
	}
}

func errOf(_ *Config, err error) error { return err }

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func FuzzParse(f *testing.F) {
	example, err := os.ReadFile("ramjet.example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(example))
	for _, s := range []string{
		"", "listen: [\n", "hosts:\n  - names: [a.test]\n    grace: -1s\n",
		"a: &a [*a]\n", "defaults: &d {cache: false}\nhosts: [{names: [x.test], <<: *d}]\n",
		"cache: {size: 1KiB, max_object_size: 2KiB}\n---\nx: 1\n",
		"listen: [\"0.0.0.0:80\", \"[::]:80\"]\n", "listen: [\"127.0.0.1:80\", null, [a]]\n", "listen: []\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		cfg, err := Parse([]byte(doc), "f.yaml")
		if err != nil {
			if cfg != nil {
				t.Fatal("config returned with an error")
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "f.yaml") {
					t.Fatalf("problem %q does not start with the file name", line)
				}
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that fails Validate: %v", err)
		}
	})
}

func TestMarshalledConfigParsesBack(t *testing.T) {
	want := Default()
	want.Hosts = []Host{{Names: []string{"a.test"}, Site: want.Defaults.clone()}}
	want.Hosts[0].Grace = Duration(90 * time.Second)
	want.Cache.MaxObjectSize = 1536 * KiB
	data, err := yaml.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(data, "marshalled.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v\n%s", got, want, data)
	}
}
