package conf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiskTierSettingsAreChecked(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		disk Disk
		want string // "" valid
	}{
		{"off", Disk{}, ""},
		{"on", Disk{Path: dir, Size: 10 * MiB}, ""},
		{"size without path", Disk{Size: 10 * MiB}, "cache.disk.size: is set but cache.disk.path is not"},
		{"tiny", Disk{Path: dir, Size: 10}, "cache.disk.size: must be at least 1MiB"},
		{"relative", Disk{Path: "cache", Size: 10 * MiB}, "must be an absolute path"},
		{"missing", Disk{Path: filepath.Join(dir, "none"), Size: 10 * MiB}, "no such file or directory"},
		{"a file", Disk{Path: file, Size: 10 * MiB}, "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			c.Cache.Disk = tt.disk
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "tmp", "*")); len(left) > 0 {
		t.Errorf("the probe left %v", left)
	}
}
