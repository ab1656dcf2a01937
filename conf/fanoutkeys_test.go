package conf

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Problems with the keys and names that keep others from purging.
func TestPurgeTrustProblems(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("# no key yet\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"short key",
			"purge:\n  redis_keys: [\"0123456789abcdef\", short]\n",
			[]string{`ramjet.yaml:2: purge.redis_keys[1]: key: at least 16 characters, got 5`}},
		{"key with a space",
			"purge:\n  redis_keys:\n    - \"0123456789 abcdef\"\n",
			[]string{`ramjet.yaml:3: purge.redis_keys[0]: key: must not contain white space or control characters`}},
		{"key twice",
			"purge:\n  redis_keys:\n    - 0123456789abcdef\n    - 0123456789abcdef\n",
			[]string{`ramjet.yaml:4: purge.redis_keys[1]: key: the same as an earlier one`}},
		{"both sources",
			"purge:\n  redis_keys: [0123456789abcdef]\n  redis_keys_file: /nonexistent\n",
			[]string{`ramjet.yaml:3: purge.redis_keys_file: give redis_keys or redis_keys_file, not both`}},
		{"file missing",
			"purge:\n  redis_keys_file: /nonexistent/keys\n",
			[]string{`ramjet.yaml:2: purge.redis_keys_file: redis keys file: open /nonexistent/keys: no such file or directory`}},
		{"admin name with a port",
			"admin:\n  names: [ramjet.internal, \"ramjet.internal:9090\"]\n",
			[]string{`ramjet.yaml:2: admin.names[1]: "ramjet.internal:9090" is not a lower-case host name (no port, no trailing dot)`}},
		{"file without a key",
			"purge:\n  redis_keys_file: " + empty + "\n",
			[]string{`ramjet.yaml:2: purge.redis_keys_file: redis keys file ` + empty + ` holds no key`}},
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

// The file's keys are its lines, the signing key first; comments and
// blank lines are skipped.
func TestFanoutKeysFromAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte("# rotated 2026-12-04\nnew-key-0123456789\n\n  old-key-0123456789  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]byte("purge:\n  redis_keys_file: "+path+"\n"), "ramjet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cfg.Purge.FanoutKeys()
	if want := []string{"new-key-0123456789", "old-key-0123456789"}; err != nil || !reflect.DeepEqual(keys, want) {
		t.Fatalf("FanoutKeys() = %q, %v; want %q", keys, err, want)
	}
}
