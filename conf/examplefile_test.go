package conf

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

const exampleFile = "ramjet.example.yaml"

func TestExampleFileMatchesDefault(t *testing.T) {
	cfg, _, err := Load(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	wantHost := Host{Names: []string{"example.com", "*.example.com"}, Site: want.Defaults.clone()}
	wantHost.DefaultTTL = Duration(5 * time.Minute)
	wantHost.AccessLog = AccessLog{Path: "/var/log/ramjet/example.com.log", Format: "ramjet"}
	if !reflect.DeepEqual(cfg.Hosts, []Host{wantHost}) {
		t.Errorf("example hosts = %+v\nwant %+v", cfg.Hosts, wantHost)
	}
	cfg.Hosts = nil
	wantTLSHosts := []TLSHost{{Names: []string{"example.com", "*.example.com"},
		Cert: "/etc/ramjet/tls/example.com.crt", Key: "/etc/ramjet/tls/example.com.key"}}
	if !reflect.DeepEqual(cfg.TLS.Hosts, wantTLSHosts) {
		t.Errorf("example tls.hosts = %+v\nwant %+v", cfg.TLS.Hosts, wantTLSHosts)
	}
	cfg.TLS.Hosts = nil
	compareFields(t, "", reflect.ValueOf(*cfg), reflect.ValueOf(*want))
}

// compareFields reports each leaf field where got and want differ.
func compareFields(t *testing.T, path string, got, want reflect.Value) {
	t.Helper()
	if got.Kind() == reflect.Struct {
		for i := range got.NumField() {
			compareFields(t, join(path, got.Type().Field(i).Name), got.Field(i), want.Field(i))
		}
		return
	}
	if !reflect.DeepEqual(got.Interface(), want.Interface()) {
		t.Errorf("example %s = %v, Default() has %v", path, got.Interface(), want.Interface())
	}
}

// TestExampleFileDocumentsEveryKey checks that every key of the schema
// appears in the example and has a comment above it or on its line.
func TestExampleFileDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	collectKeys(doc.Content[0], "", documented)
	for _, key := range schemaKeys(reflect.TypeFor[Config](), "") {
		if rest, ok := strings.CutPrefix(key, "hosts[]."); ok && documented["defaults."+rest] {
			continue // host overrides are the defaults keys, documented there
		}
		ok, present := documented[key]
		switch {
		case !present:
			t.Errorf("%s: key %s is missing", exampleFile, key)
		case !ok:
			t.Errorf("%s: key %s has no comment", exampleFile, key)
		}
	}
}

// collectKeys records every key path under n (list items as "[]") and
// whether it carries a comment.
func collectKeys(n *yaml.Node, path string, out map[string]bool) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			kp := join(path, k.Value)
			// A comment above "- key:" belongs to the list item, not the key.
			itemComment := i == 0 && n.HeadComment != ""
			out[kp] = itemComment || k.HeadComment != "" || k.LineComment != "" || v.LineComment != ""
			collectKeys(v, kp, out)
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			collectKeys(item, path+"[]", out)
		}
	}
}

// schemaKeys lists the key paths of t's yaml tags; list items are "[]".
func schemaKeys(t reflect.Type, path string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opt, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opt == "inline" {
			keys = append(keys, schemaKeys(f.Type, path)...)
			continue
		}
		if name == "-" {
			continue // not a key
		}
		kp := join(path, name)
		keys = append(keys, kp)
		switch {
		case f.Type.Kind() == reflect.Struct:
			keys = append(keys, schemaKeys(f.Type, kp)...)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			keys = append(keys, schemaKeys(f.Type.Elem(), kp+"[]")...)
		}
	}
	return keys
}
