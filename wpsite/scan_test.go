package wpsite

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTree creates files (path: content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const versionPHP = "<?php\n$wp_version = '6.4.2';\n"

// TestFindLooksWhereLscmctlDoes: an install is wp-includes/version.php
// with wp-config.php beside it or in a parent that is no WordPress;
// WordPress's own trees, hidden directories, symlinks and what lies
// deeper than depth are not searched.
func TestFindLooksWhereLscmctlDoes(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"alice/public_html/wp-includes/version.php":                      versionPHP,
		"alice/public_html/wp-config.php":                                "<?php",
		"alice/public_html/.litespeed_flag":                              "",
		"alice/public_html/blog/wp-includes/version.php":                 versionPHP, // a second WordPress inside the first
		"alice/public_html/blog/wp-config.php":                           "<?php",
		"alice/public_html/wp-content/plugins/x/wp-includes/version.php": versionPHP,
		"alice/public_html/wp-content/plugins/x/wp-config.php":           "<?php",
		"bob/wp-config.php":                                              "<?php", // moved up, as WordPress allows
		"bob/public_html/wp-includes/version.php":                        versionPHP,
		"bob/public_html/.ramjet_flag":                                   "",
		"carol/public_html/wp-includes/version.php":                      versionPHP, // no wp-config.php anywhere
		"dave/.trash/wp-includes/version.php":                            versionPHP,
		"dave/.trash/wp-config.php":                                      "<?php",
		"erin/a/b/c/d/wp-includes/version.php":                           versionPHP, // 5 levels down
		"erin/a/b/c/d/wp-config.php":                                     "<?php",
	})
	if err := os.Symlink(filepath.Join(root, "alice", "public_html"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	installs, problems, err := Find([]string{root}, 4)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range installs {
		rel, _ := filepath.Rel(root, in.Path)
		cfg, _ := filepath.Rel(root, in.Config)
		got = append(got, rel+" "+cfg+" "+in.Version+" "+in.OptOut)
	}
	want := []string{
		"alice/public_html alice/public_html/wp-config.php 6.4.2 .litespeed_flag",
		"alice/public_html/blog alice/public_html/blog/wp-config.php 6.4.2 ",
		"bob/public_html bob/wp-config.php 6.4.2 .ramjet_flag",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Find:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(problems) != 1 || !errors.Is(problems[0], ErrNotWordPress) || !strings.Contains(problems[0].Error(), "carol") {
		t.Errorf("problems %v, want carol's missing wp-config.php", problems)
	}
	deeper, _, err := Find([]string{root}, 5)
	if err != nil || len(deeper) != 4 {
		t.Errorf("Find at depth 5: %d installs (%v), want erin's too", len(deeper), err)
	}
}

func TestFindRefusesAMissingRoot(t *testing.T) {
	if _, _, err := Find([]string{filepath.Join(t.TempDir(), "nope")}, 4); err == nil {
		t.Error("Find of a missing root: no error")
	}
}

// TestInspectSaysWhatIsMissing: a directory that is no WordPress, and a
// version.php that is not a plain file of the install, are clear errors.
func TestInspectSaysWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"empty/index.php":                      "",
		"noconfig/wp-includes/version.php":     versionPHP,
		"elsewhere/wp-config.php":              "<?php",
		"elsewhere/secret":                     "$wp_version = '1.0';\n",
		"parentwp/wp-settings.php":             "<?php",
		"parentwp/wp-config.php":               "<?php",
		"parentwp/sub/wp-includes/version.php": versionPHP,
		"noversion/wp-config.php":              "<?php",
		"noversion/wp-includes/version.php":    "<?php\n",
	})
	if err := os.MkdirAll(filepath.Join(dir, "elsewhere", "wp-includes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere", "secret"), filepath.Join(dir, "elsewhere", "wp-includes", "version.php")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir, want string
		is        error
	}{
		{"empty", "no wp-includes/version.php", ErrNotWordPress},
		{"empty/index.php", "not a directory", ErrNotWordPress},
		{"noconfig", "no wp-config.php in it or its parent", ErrNotWordPress},
		{"parentwp/sub", "no wp-config.php in it or its parent", ErrNotWordPress},
		{"noversion", "no $wp_version assignment", ErrNoVersion},
		{"elsewhere", "version.php", nil},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			_, err := Inspect(filepath.Join(dir, tt.dir))
			if err == nil || !strings.Contains(err.Error(), tt.want) || tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Inspect(%s) = %v, want an error with %q", tt.dir, err, tt.want)
			}
		})
	}
}
