package wpsite

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMatchGivesAnInstallTheSiteWithTheDeepestRoot: a WordPress in /blog
// of a site's docroot is that site's; a sub-site with its own root under
// another's wins; one outside every root has no site.
func TestMatchGivesAnInstallTheSiteWithTheDeepestRoot(t *testing.T) {
	root := t.TempDir()
	sites := []Site{
		{Name: "a.test", Roots: []string{filepath.Join(root, "a")}},
		{Name: "shop.a.test", Roots: []string{"", filepath.Join(root, "a", "shop") + "/"}},
		{Name: "b.test", Roots: []string{filepath.Join(root, "b")}},
	}
	if err := os.Symlink(filepath.Join(root, "b"), filepath.Join(root, "b-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	installs := []Install{
		{Path: filepath.Join(root, "a")},
		{Path: filepath.Join(root, "a", "blog")},
		{Path: filepath.Join(root, "a", "shop")},
		{Path: filepath.Join(root, "ab")},
		{Path: filepath.Join(root, "b-link")},
	}
	var got []string
	for _, tg := range Match(installs, sites) {
		got = append(got, tg.siteName())
	}
	want := []string{"a.test", "a.test", "shop.a.test", "-", "b.test"}
	if !slices.Equal(got, want) {
		t.Errorf("Match: %v, want %v", got, want)
	}
}

func TestSelectByNameOrDirectory(t *testing.T) {
	a := Site{Name: "a.test", Names: []string{"a.test", "www.a.test"}}
	targets := []Target{{Install: Install{Path: "/home/a/public_html"}, Site: &a}, {Install: Install{Path: "/home/x/public_html"}}}
	picked, unknown := Select(targets, []string{"WWW.a.test", "/home/x/public_html/", "c.test"})
	if len(picked) != 2 || picked[0].Site != &a || picked[1].Path != "/home/x/public_html" || !slices.Equal(unknown, []string{"c.test"}) {
		t.Errorf("Select: %v, unknown %v", picked, unknown)
	}
}

// TestCredentialIsTheOwnersNeverRoots: PHP inside an install runs as its
// owner with the owner's groups; a root-owned install is refused.
func TestCredentialIsTheOwnersNeverRoots(t *testing.T) {
	if _, err := (Owner{UID: 0, Name: "root"}).credential(); !errors.Is(err, ErrRootOwned) {
		t.Errorf("root-owned install: %v, want ErrRootOwned", err)
	}
	o := Owner{UID: 54321, GID: 54322, Groups: []uint32{54322, 54323}, Name: "site"}
	cred, err := o.credential()
	if os.Geteuid() != 0 {
		if !errors.Is(err, ErrNotOwner) {
			t.Errorf("as uid %d for another owner: %v, want ErrNotOwner", os.Geteuid(), err)
		}
		return
	}
	if err != nil || cred.Uid != o.UID || cred.Gid != o.GID || !slices.Equal(cred.Groups, o.Groups) {
		t.Errorf("credential: %+v, %v", cred, err)
	}
}

// TestParseResultTakesTheScriptsLastLine: what WordPress or a plugin
// prints before it (HTML of wp_die, notices) is not the answer.
func TestParseResultTakesTheScriptsLastLine(t *testing.T) {
	out := "<p>Notice</p>\n" + resultPrefix + `{"cache":"x"}` + "\nmore\n" + resultPrefix + `{"cache":"litespeed-cache","enabled":"litespeed-cache"}` + "\n"
	st, ok := parseResult(out)
	if !ok || st.Cache != "litespeed-cache" || st.Enabled != "litespeed-cache" {
		t.Errorf("parseResult = %+v, %v", st, ok)
	}
	for _, bad := range []string{"", "<h1>Error establishing a database connection</h1>", resultPrefix + "{}", "\n" + resultPrefix + "{not json"} {
		if _, ok := parseResult(bad); ok {
			t.Errorf("parseResult(%q) took it as an answer", bad)
		}
	}
}
