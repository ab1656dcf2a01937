package phppool

import (
	"reflect"
	"testing"
)

func TestConfinementGrantsTheFilesPHPSettingsName(t *testing.T) {
	for v, want := range map[string][]string{
		"/srv/prepend.php": {"/srv/prepend.php"},
		`"/srv/a/../b"`:    {"/srv/b"},
		"2;0600;/var/sess": {"/var/sess"},
		"relative/path":    nil,
		"":                 nil,
		"/a;/b":            {"/a", "/b"},
	} {
		if got := iniPaths(v); !reflect.DeepEqual(got, want) {
			t.Errorf("iniPaths(%q) = %q, want %q", v, got, want)
		}
	}
	if !isPathINI("auto_prepend_file") || isPathINI("memory_limit") {
		t.Error("isPathINI: auto_prepend_file names a file, memory_limit does not")
	}
}
