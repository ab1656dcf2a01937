package adoption

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Service is the package's ramjet.service on a host that systemd runs:
// the ramjet --apply leaves serving is that unit's process, on sockets
// systemd binds (a socket unit of the same name, with SO_REUSEPORT, so
// that they join the web server's listeners while both serve), reading
// the configuration the unit names.
type Service struct {
	Unit   string // "ramjet.service"
	Socket string // the socket unit adopt writes: /etc/systemd/system/ramjet.socket
	Conf   string // the configuration the unit reads
}

// PackageService is the Debian package's unit (conf/ramjet.service).
var PackageService = Service{Unit: "ramjet.service", Socket: "/etc/systemd/system/ramjet.socket", Conf: "/etc/ramjet/ramjet.yaml"}

// ServiceState is what --rollback puts back.
type ServiceState struct {
	Active  bool `json:"active"`
	Enabled bool `json:"enabled"`
	// ConfBackup is the unit's configuration as it was, kept in the
	// backup; "" when there was none.
	ConfBackup string `json:"conf_backup,omitempty"`
}

// Detect reports whether systemd runs this host and the unit is
// installed.
func (s Service) Detect(ctx context.Context) bool {
	if st, err := os.Stat("/run/systemd/system"); err != nil || !st.IsDir() {
		return false
	}
	out, err := systemctl(ctx, "show", "--property=LoadState", "--value", s.Unit)
	return err == nil && out == "loaded"
}

// State reads whether the unit runs and starts at boot, and keeps its
// configuration in dir.
func (s Service) State(ctx context.Context, dir string) (ServiceState, error) {
	var st ServiceState
	enabled, _ := systemctl(ctx, "is-enabled", s.Unit) // non-zero when disabled
	st.Active, st.Enabled = s.Active(ctx), enabled == "enabled"
	data, err := os.ReadFile(s.Conf)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("adoption: %w", err)
	}
	st.ConfBackup = filepath.Join(dir, "ramjet.yaml.before")
	if err := os.WriteFile(st.ConfBackup, data, 0o600); err != nil {
		return st, fmt.Errorf("adoption: keep %s: %w", s.Conf, err)
	}
	return st, nil
}

// socketUnit is the socket unit for the addresses ramjet takes.
func (s Service) socketUnit(listens []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `ramjet adopt --apply`; `ramjet adopt --rollback` removes it.\n")
	fmt.Fprintf(&b, "# systemd binds ramjet's public addresses with SO_REUSEPORT, as root,\n")
	fmt.Fprintf(&b, "# so that they join the web server's while both serve: the connections\n")
	fmt.Fprintf(&b, "# queued on the web server's listeners move here when it lets them go.\n")
	fmt.Fprintf(&b, "[Unit]\nDescription=ramjet's public addresses (ramjet adopt)\n\n[Socket]\n")
	for _, a := range listens {
		fmt.Fprintf(&b, "ListenStream=%s\n", strings.TrimPrefix(a, ":"))
	}
	if v6Only(listens) {
		fmt.Fprintf(&b, "# IPv6 addresses IPv6 only, as nginx binds them.\nBindIPv6Only=ipv6-only\n")
	}
	fmt.Fprintf(&b, "ReusePort=yes\nService=%s\n\n[Install]\nWantedBy=sockets.target\n", s.Unit)
	return b.String()
}

// v6Only reports whether the socket unit binds its IPv6 addresses IPv6
// only (as ListenReusePort does): when there is one and no wildcard
// ":PORT", which is one dual-stack socket.
func v6Only(listens []string) bool {
	v6 := false
	for _, a := range listens {
		if strings.HasPrefix(a, ":") {
			return false
		}
		v6 = v6 || family(a) == "tcp6"
	}
	return v6
}

// Start has systemd bind listens (the socket unit), installs the
// configuration staged and starts the unit on them, enabled for the
// next boot, and returns its main process once it serves (Type=notify:
// systemctl returns then). A unit that ran with another configuration
// is stopped first: it watches its file, and systemd would not start
// the socket unit beside it.
func (s Service) Start(ctx context.Context, staged string, listens []string) (int, error) {
	if err := os.WriteFile(s.Socket, []byte(s.socketUnit(listens)), 0o644); err != nil {
		return 0, fmt.Errorf("adoption: %w", err)
	}
	sock := filepath.Base(s.Socket)
	// systemd refuses to start a socket unit whose service runs.
	steps := [][]string{{"daemon-reload"}, {"stop", s.Unit}, {"start", sock}, nil, {"start", s.Unit}, {"enable", sock, s.Unit}}
	for _, args := range steps {
		var out string
		var err error
		if args == nil {
			err = s.install(staged)
		} else {
			out, err = systemctl(ctx, args...)
		}
		if err != nil {
			log, _ := exec.CommandContext(ctx, "journalctl", "--no-pager", "-n", "20", "-o", "cat", "-u", s.Unit, "-u", sock).CombinedOutput()
			return 0, errors.Join(fmt.Errorf("adoption: systemctl %s: %w\n%s\n%s", strings.Join(args, " "), err, out, log), s.removeSocket(ctx))
		}
	}
	out, err := systemctl(ctx, "show", "--property=MainPID", "--value", s.Unit)
	pid, perr := strconv.Atoi(out)
	if err != nil || perr != nil || pid == 0 {
		return 0, fmt.Errorf("adoption: %s has no main process after its start (%q): %w", s.Unit, out, errors.Join(err, perr))
	}
	return pid, nil
}

// install copies the staged configuration to the unit's, with its owner
// and mode.
func (s Service) install(staged string) error {
	data, err := os.ReadFile(staged)
	if err != nil {
		return fmt.Errorf("adoption: %w", err)
	}
	st, err := os.Stat(staged)
	if err != nil {
		return fmt.Errorf("adoption: %w", err)
	}
	return s.write(data, st)
}

// replace puts data in the unit's configuration with the owner and mode
// it has (root and ramjet's group, 0640, as the package makes it).
func (s Service) replace(data []byte) error {
	st, err := os.Stat(s.Conf)
	if err != nil {
		return fmt.Errorf("adoption: %w", err)
	}
	return s.write(data, st)
}

func (s Service) write(data []byte, like fs.FileInfo) error {
	sys := like.Sys().(*syscall.Stat_t)
	if err := writeOwned(s.Conf, data, int(sys.Uid), int(sys.Gid), like.Mode().Perm()); err != nil {
		return fmt.Errorf("adoption: %s: %w", s.Conf, err)
	}
	return nil
}

// Active reports whether the unit runs.
func (s Service) Active(ctx context.Context) bool {
	out, _ := systemctl(ctx, "is-active", s.Unit) // non-zero when it does not
	return out == "active"
}

// Stop stops the unit in the order that refuses no request: systemd
// lets go of the socket first (the unit's process still accepts on
// it), then the process drains and exits, and the connections still
// queued move to the web server's listeners of the same addresses.
func (s Service) Stop(ctx context.Context) error {
	for _, u := range []string{filepath.Base(s.Socket), s.Unit} {
		if out, err := systemctl(ctx, "stop", u); err != nil {
			return fmt.Errorf("adoption: systemctl stop %s: %w\n%s", u, err, out)
		}
	}
	return nil
}

// Restore removes the socket unit and puts the unit's configuration and
// state back as st says they were.
func (s Service) Restore(ctx context.Context, st ServiceState) error {
	if err := s.removeSocket(ctx); err != nil {
		return err
	}
	if st.ConfBackup != "" {
		data, err := os.ReadFile(st.ConfBackup)
		if err != nil {
			return fmt.Errorf("adoption: %w", err)
		}
		if err := s.replace(data); err != nil {
			return err
		}
	}
	steps := [][]string{{"disable", s.Unit}}
	if st.Enabled {
		steps[0][0] = "enable"
	}
	if st.Active {
		steps = append(steps, []string{"start", s.Unit})
	}
	for _, args := range steps {
		if out, err := systemctl(ctx, args...); err != nil {
			return fmt.Errorf("adoption: systemctl %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// removeSocket stops, disables and removes the socket unit.
func (s Service) removeSocket(ctx context.Context) error {
	sock := filepath.Base(s.Socket)
	_, _ = systemctl(ctx, "disable", "--now", sock) // it may never have started
	if err := os.Remove(s.Socket); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("adoption: %w", err)
	}
	if out, err := systemctl(ctx, "daemon-reload"); err != nil {
		return fmt.Errorf("adoption: systemctl daemon-reload: %w\n%s", err, out)
	}
	return nil
}

func systemctl(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "systemctl", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
