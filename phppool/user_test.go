package phppool

import (
	"errors"
	"log/slog"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestWorkerCredentialNeverRootNorRamjetsOwn(t *testing.T) {
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("no nobody user: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid) // system data; a bad uid fails the comparisons below
	gid, _ := strconv.Atoi(nobody.Gid)
	asNobody := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	root := identity{euid: 0, egid: 0, canSwitch: true}
	tests := []struct {
		name        string
		user, group string
		id          identity
		want        *syscall.Credential
		wantErr     error
	}{
		{"root defaults to nobody and its group", "", "", root, asNobody, nil},
		{"root with a numeric user", nobody.Uid, "", root, asNobody, nil},
		{"root refuses user root", "root", "", root, nil, errRootWorker},
		{"root refuses group root", "nobody", "0", root, nil, errRootWorker},
		{"not root with the capabilities switches", "nobody", "", identity{euid: uid + 1, egid: gid + 1, canSwitch: true}, asNobody, nil},
		{"not root without the capabilities refuses", "nobody", "", identity{euid: uid + 1, egid: gid + 1}, nil, ErrCannotSwitch},
		{"ramjet's own user is refused", "nobody", "", identity{euid: uid, egid: gid + 1, canSwitch: true}, nil, ErrOwnUser},
		{"ramjet's own group is refused", "nobody", "", identity{euid: uid + 1, egid: gid, canSwitch: true}, nil, ErrOwnUser},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := workerCredential(tt.user, tt.group, tt.id)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if (got == nil) != (tt.want == nil) || got != nil &&
				(got.Uid != tt.want.Uid || got.Gid != tt.want.Gid || got.Groups == nil || len(got.Groups) != 0) {
				t.Fatalf("credential %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestWorkerEnvIsOnlyTheConfiguredOne(t *testing.T) {
	ramjets := map[string]string{"KEEP": "from-ramjet", "SECRET": "token"}
	lookup := func(k string) (string, bool) { v, ok := ramjets[k]; return v, ok }
	tests := []struct {
		name string
		list []string
		want []string
	}{
		{"nothing configured: empty, not nil", nil, []string{}},
		{"values as given", []string{"APP_ENV=prod", "EMPTY="}, []string{"APP_ENV=prod", "EMPTY="}},
		{"a bare name passes ramjet's value", []string{"KEEP"}, []string{"KEEP=from-ramjet"}},
		{"a bare name ramjet lacks is left out", []string{"MISSING", "A=1"}, []string{"A=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := workerEnv(tt.list, lookup)
			if got == nil || !slices.Equal(got, tt.want) {
				t.Fatalf("env %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPoolRunsPHPAsTheConfiguredUserWhenRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		testbed.Skip(t, "switching users needs root; without root, TestWorkerCredentialNeverRoot covers that workers run as ramjet's user")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("no nobody user: %v", err)
	}
	tests := []struct {
		name string
		cfg  Config
	}{
		{"default user", Config{}},
		{"named user and group", Config{User: "nobody", Group: nobody.Gid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startPool(t, tt.cfg, slog.New(slog.DiscardHandler))
			body, err := runFor(p, testdataScript(t, "whoami.php"), "GET", "")
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(body)
			if len(f) < 3 || f[1] != nobody.Uid || f[2] != nobody.Gid || len(f) > 3 && f[3] != "" {
				t.Fatalf("worker %q (pid uid gid groups), want uid %s gid %s and no groups", body, nobody.Uid, nobody.Gid)
			}
		})
	}
}
