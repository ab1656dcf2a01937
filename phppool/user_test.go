package phppool

import (
	"errors"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestWorkerCredentialNeverRoot(t *testing.T) {
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("no nobody user: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid) // system data; a bad uid fails the comparisons below
	gid, _ := strconv.Atoi(nobody.Gid)
	tests := []struct {
		name        string
		user, group string
		euid        int
		want        *syscall.Credential
		wantErr     error
		wantWarning bool
	}{
		{"root defaults to nobody and its group", "", "", 0, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil, false},
		{"root with a numeric user", nobody.Uid, "", 0, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil, false},
		{"root refuses user root", "root", "", 0, nil, errRootWorker, false},
		{"root refuses group root", "nobody", "0", 0, nil, errRootWorker, false},
		{"not root runs as itself", "", "", 1000, nil, nil, false},
		{"not root warns about another user", "nobody", "", uid + 1, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			got, err := workerCredential(tt.user, tt.group, tt.euid, logs.logger())
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if (got == nil) != (tt.want == nil) || got != nil &&
				(got.Uid != tt.want.Uid || got.Gid != tt.want.Gid || got.Groups == nil || len(got.Groups) != 0) {
				t.Fatalf("credential %+v, want %+v", got, tt.want)
			}
			if warned := strings.Contains(logs.String(), "WARN"); warned != tt.wantWarning {
				t.Fatalf("warning logged %v, want %v: %s", warned, tt.wantWarning, logs.String())
			}
		})
	}
}

func TestPoolRunsPHPAsTheConfiguredUserWhenRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching users needs root; without root, TestWorkerCredentialNeverRoot covers that workers run as ramjet's user")
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
