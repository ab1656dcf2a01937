package wpsite

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
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
	me := Owner{UID: uint32(os.Getuid()), Name: "me"}
	var installs []Install
	for _, dir := range []string{"a", "a/blog", "a/shop", "ab", "b", "b-link"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if dir != "b" {
			installs = append(installs, Install{Path: filepath.Join(root, dir), Owner: me})
		}
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

// TestMatchGivesASiteTokenOnlyToItsOwnersInstalls: an install another
// user made in a site's world-writable directory, one below a directory
// root owns that everyone may write, and one under two sites' roots that
// are the same directory get no site, saying why; a tenant's link as a
// site's root does not make another's directory that site's.
func TestMatchGivesASiteTokenOnlyToItsOwnersInstalls(t *testing.T) {
	if os.Geteuid() != 0 {
		testbed.Skip(t, "needs root to give directories to other users")
	}
	root := t.TempDir()
	b, a := Owner{UID: 54321, Name: "b"}, Owner{UID: 54322, Name: "a"}
	mk := func(dir string, uid uint32, mode os.FileMode) string {
		p := filepath.Join(root, dir)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, int(uid), int(uid)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bRoot := mk("b", b.UID, 0o755)
	mk("b/cache", b.UID, 0o777)
	planted := mk("b/cache/evil", a.UID, 0o755)
	mk("b/tmp", 0, 0o1777)
	underTmp := mk("b/tmp/wp", b.UID, 0o755)
	blog := mk("b/blog", b.UID, 0o755)
	shared := mk("shared", b.UID, 0o755)
	aHome := mk("a", a.UID, 0o755)
	link := filepath.Join(aHome, "public_html")
	if err := os.Symlink(blog, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, int(a.UID), int(a.UID)); err != nil {
		t.Fatal(err)
	}
	sites := []Site{
		{Name: "b.test", Roots: []string{bRoot}},
		{Name: "a.test", Roots: []string{link}}, // a's link into b's blog
		{Name: "s1.test", Roots: []string{shared}},
		{Name: "s2.test", Roots: []string{shared + "/"}},
	}
	tests := []struct {
		in        Install
		site, why string
	}{
		{Install{Path: bRoot, Owner: b}, "b.test", ""},
		{Install{Path: blog, Owner: b}, "b.test", ""},
		{Install{Path: planted, Owner: a}, "-", "belongs to uid 54321, not to a"},
		{Install{Path: underTmp, Owner: b}, "-", "root's and writable by every user"},
		{Install{Path: shared, Owner: b}, "-", "the same directory"},
	}
	for _, tt := range tests {
		got := Match([]Install{tt.in}, sites)[0]
		if got.siteName() != tt.site || tt.why == "" && got.Unmatched != nil ||
			tt.why != "" && (got.Unmatched == nil || !strings.Contains(got.Unmatched.Error(), tt.why)) {
			t.Errorf("Match(%s) = %s (%v), want %s (%q)", tt.in.Path, got.siteName(), got.Unmatched, tt.site, tt.why)
		}
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

// TestOnlyEnableGivesPHPTheSitesToken: a scan, a disable and enable's
// check run the install's PHP without the token.
func TestOnlyEnableGivesPHPTheSitesToken(t *testing.T) {
	tg := Target{Site: &Site{Name: "a.test", Token: "secret"}}
	for _, action := range []string{"status", "disable", "enable"} {
		r := Manager{}.request(action, tg)
		if want := map[bool]string{true: "secret", false: ""}[action == "enable"]; r.Token != want || r.Host != "a.test" {
			t.Errorf("%s: token %q host %q, want token %q", action, r.Token, r.Host, want)
		}
	}
}

func TestTailKeepsTheLastBytes(t *testing.T) {
	tl := &tail{max: 8}
	for _, w := range []string{"abc", "defgh", "ij", "0123456789XY", "z"} {
		if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if got := tl.String(); got != "456789XYz"[1:] {
		t.Errorf("tail = %q, want the last 8 bytes", got)
	}
}

// TestRootDirFollowsOnlyRootsSymlinks: /home -> /home2 (root's) resolves,
// a tenant's public_html linked elsewhere is taken as written.
func TestRootDirFollowsOnlyRootsSymlinks(t *testing.T) {
	if os.Geteuid() != 0 {
		testbed.Skip(t, "needs root to own one link and give another away")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "home2", "a", "public_html")
	other := filepath.Join(dir, "home2", "b", "public_html")
	for _, d := range []string{real, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("home2", filepath.Join(dir, "home")); err != nil { // root's, relative
		t.Fatal(err)
	}
	if got := rootDir(filepath.Join(dir, "home", "a", "public_html")); got != real {
		t.Errorf("through root's link: %s, want %s", got, real)
	}
	tenant := filepath.Join(dir, "home2", "c")
	if err := os.MkdirAll(tenant, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tenant, "public_html")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 54321, 54321); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "home", "c", "public_html")
	if got := rootDir(want); got != want {
		t.Errorf("through a tenant's link: %s, want it as written", got)
	}
}
