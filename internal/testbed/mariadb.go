package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const (
	mariadbBin = "/usr/sbin/mariadbd"
	// setupTimeout bounds one setup command (mariadb-install-db, a copy
	// of WordPress, an SQL script).
	setupTimeout = 60 * time.Second
)

// MariaDB is one mariadbd with a private datadir, listening on a unix
// socket only (no TCP port at all).
type MariaDB struct {
	Socket string // unix socket path, readable by every user
	Dir    string // datadir, config and error log

	p *proc
}

// StartMariaDB initialises a datadir and runs mariadbd on it, and
// returns once the socket accepts. root reaches it through the socket
// (unix_socket authentication). It is stopped at cleanup; its error log
// is logged when the test failed.
func StartMariaDB(t testing.TB) *MariaDB {
	t.Helper()
	for _, bin := range []string{mariadbBin, "/usr/bin/mariadb-install-db", "/usr/bin/mariadb"} {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("testbed: %s not found: install the Debian package mariadb-server: %v", bin, err)
		}
	}
	m := &MariaDB{Dir: t.TempDir(), Socket: filepath.Join(socketDir(t), "db.sock")}
	cnf := filepath.Join(m.Dir, "my.cnf")
	if err := os.WriteFile(cnf, []byte(m.config()), 0o644); err != nil {
		t.Fatalf("testbed: mariadb config: %v", err)
	}
	if err := installDB(cnf); err != nil {
		// It failed once in a loaded CI run with nothing kept to say why;
		// its error log is shown, and it is tried once more in a clean
		// datadir before the test gives up.
		t.Logf("testbed: %v; trying once more", err)
		if err := os.RemoveAll(filepath.Join(m.Dir, "data")); err != nil {
			t.Fatalf("testbed: mariadb datadir: %v", err)
		}
		if err := installDB(cnf); err != nil {
			t.Fatalf("testbed: %v", err)
		}
	}
	p, err := startProc(procSpec{bin: mariadbBin, args: []string{"--defaults-file=" + cnf}})
	if err != nil {
		t.Fatal(err)
	}
	m.p = p
	t.Cleanup(func() {
		p.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("mariadb logs:\n%s", m.logs())
		}
	})
	if err := waitListen(p, "unix", m.Socket); err != nil {
		t.Fatalf("%v\n%s", err, m.logs())
	}
	return m
}

// socketDir is a short temporary directory (a unix socket path has at
// most 107 bytes; t.TempDir's carry the test's name) every user can
// enter: PHP run by ramjet as nobody must reach the socket.
func socketDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tbdb")
	if err != nil {
		t.Fatalf("testbed: socket dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // best effort: a leftover socket is harmless
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("testbed: socket dir: %v", err)
	}
	return dir
}

func (m *MariaDB) config() string {
	user := ""
	if os.Geteuid() == 0 {
		user = "user=root\n"
	}
	return fmt.Sprintf("[mysqld]\n%sdatadir=%[2]s/data\nsocket=%[3]s\npid-file=%[2]s/db.pid\nskip-networking\nskip-name-resolve\n"+
		"innodb_buffer_pool_size=32M\ninnodb_log_file_size=8M\ninnodb_flush_log_at_trx_commit=0\nsync_binlog=0\nperformance_schema=OFF\n"+
		"log-error=%[2]s/error.log\n", user, m.Dir, m.Socket)
}

func (m *MariaDB) logs() string { return procLogs(m.p, filepath.Join(m.Dir, "error.log")) }

// Exec runs SQL statements as root and fails the test on an error.
func (m *MariaDB) Exec(t testing.TB, sql string) {
	t.Helper()
	cmd := exec.Command("mariadb", "--socket="+m.Socket, "-uroot", "-e", sql)
	if out, err := RunCmd(cmd, setupTimeout); err != nil {
		t.Fatalf("testbed: mariadb -e %q: %v\n%s\n%s", sql, err, out, m.logs())
	}
}

// installDB initialises the datadir cnf names; its error says why, with
// the server's error log.
func installDB(cnf string) error {
	inst := exec.Command("mariadb-install-db", "--defaults-file="+cnf, "--auth-root-authentication-method=socket", "--skip-test-db")
	out, err := RunCmd(inst, setupTimeout)
	if err == nil {
		return nil
	}
	errLog, _ := os.ReadFile(filepath.Join(filepath.Dir(cnf), "error.log"))
	return fmt.Errorf("mariadb-install-db: %w\n%s\n--- error.log\n%s", err, out, errLog)
}
