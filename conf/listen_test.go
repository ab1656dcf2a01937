package conf

import (
	"slices"
	"strings"
	"testing"
)

func TestListenTakesAListOfAddresses(t *testing.T) {
	c, err := Parse([]byte("listen: [\"127.0.0.1:8080\", \"[::1]:8080\"]\n"), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8080" || !slices.Equal(c.ListenAlso, []string{"[::1]:8080"}) {
		t.Fatalf("listen %q, also %q", c.Listen, c.ListenAlso)
	}
	c, err = Parse([]byte("listen: \":8080\"\n"), "r.yaml")
	if err != nil || c.Listen != ":8080" || c.ListenAlso != nil {
		t.Fatalf("a single address: %q %q %v", c.Listen, c.ListenAlso, err)
	}
}

func TestListenListRefusesWhatCannotBeBoundSideBySide(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"listen: []\n", "r.yaml:1: listen: an empty list"},
		{"listen: [\":80\", \"[::]:80\"]\n", `r.yaml:1: listen[0]: ":80": each address of a list is an IP address and port`},
		{"listen: [\"0.0.0.0:80\", \"localhost:80\"]\n", `listen[1]: "localhost:80": each address of a list is an IP address`},
		{"listen: [\"0.0.0.0:80\", \"0.0.0.0:80\"]\n", `listen[1]: "0.0.0.0:80" is listen[0] already`},
		{"listen: [\"0.0.0.0:80\", \"127.0.0.1:9090\"]\n", `listen[1]: "127.0.0.1:9090" is admin.listen already`},
		{"listen: [\"0.0.0.0:80\", \"[::]:x\"]\n", `listen[1]: "[::]:x" has a bad port`},
		{"listen: [\"0.0.0.0:80\", {a: b}]\n", "listen[1]: expected a string"},
	} {
		_, err := Parse([]byte(tc.yaml), "r.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", strings.TrimSpace(tc.yaml), err, tc.want)
		}
	}
}
