package adoption

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Job is one `ramjet adopt` of a web server whose configuration was
// read: the plan, and what to do with it.
type Job struct {
	Server string // "nginx" or "apache"
	Bin    string // the web server's tool
	Conf   string // its configuration file
	Web    WebServer
	Files  map[string][]byte // as read
	Sites  []Site
	Notes  []Note
	Edits  func(*Plan, Phase) []Edit
	Options
	Out    string // ramjet's configuration file; "" or "-" for stdout
	Group  string // ramjet's group: token files are readable by it
	Backup string // the backup directory of --apply
	Ramjet string // ramjet's binary
	// Service, when set, is the systemd unit ramjet serves as after the
	// switch (see Service); nil starts ramjet outside systemd.
	Service *Service
	// Check runs `ramjet check` on a configuration file.
	Check func(ctx context.Context, file string) error
}

// Plan maps the sites, writing the notes to stderr.
func (j *Job) Plan(stderr io.Writer) (*Plan, error) {
	p, err := NewPlan(j.Sites, j.Notes, j.Options)
	if err != nil {
		return nil, err
	}
	for _, n := range p.Notes {
		fmt.Fprintf(stderr, "not mapped: %s\n", n)
	}
	return p, loadCerts(p)
}

// loadCerts refuses a site whose certificate and key do not load: ramjet
// would refuse its configuration, and a web server that reads them only
// when it (re)starts (Apache) would stop on its reload.
func loadCerts(p *Plan) error {
	var errs []error
	for _, s := range p.Sites {
		if s.Cert == "" {
			continue
		}
		if _, err := tls.LoadX509KeyPair(s.Cert, s.Key); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: the certificate %s (key %s) does not load: %w", s.File, s.Line, s.Cert, s.Key, err))
		}
	}
	return errors.Join(errs...)
}

// versions are the web server's files in phases Both and Moved.
func (j *Job) versions(p *Plan) (both, moved map[string][]byte, err error) {
	if both, err = ApplyEdits(j.Files, j.Edits(p, Both)); err != nil {
		return nil, nil, err
	}
	moved, err = ApplyEdits(j.Files, j.Edits(p, Moved))
	return both, moved, err
}

// DryRun prints the change to the web server's files as a unified diff.
func (j *Job) DryRun(stdout, stderr io.Writer) error {
	p, err := j.Plan(stderr)
	if err != nil {
		return err
	}
	_, moved, err := j.versions(p)
	if err != nil {
		return err
	}
	for _, f := range slices.Sorted(maps.Keys(moved)) {
		d, err := unifiedDiff(f, j.Files[f], moved[f])
		if err != nil {
			return err
		}
		io.WriteString(stdout, d)
	}
	fmt.Fprintf(stderr, "ramjet adopt: %d sites as %d hosts; ramjet would take %s, the web server would move to %s\n", len(p.Sites), len(p.Hosts), p.both(), p.Origin)
	return nil
}

// Write writes ramjet's configuration (Out) and the token files.
func (j *Job) Write(stdout, stderr io.Writer) (*Plan, error) {
	p, err := j.Plan(stderr)
	if err != nil {
		return nil, err
	}
	gid, err := groupID(j.Group)
	if err != nil {
		return nil, err
	}
	if err := p.WriteTokens(gid); err != nil {
		return nil, err
	}
	operator, err := j.operatorToken(gid)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := p.WriteConfig(&buf, operator); err != nil {
		return nil, err
	}
	if j.Out == "" || j.Out == "-" {
		_, err := stdout.Write(buf.Bytes())
		return p, err
	}
	if err := writeOwned(j.Out, buf.Bytes(), 0, gid, 0o640); err != nil {
		return nil, fmt.Errorf("adoption: %s: %w", j.Out, err)
	}
	return p, nil
}

// operatorToken is admin.token: kept in the token directory (root's
// alone) so that adopting again keeps it.
func (j *Job) operatorToken(gid int) (string, error) {
	f := filepath.Join(j.TokenDir, "_operator")
	if b, err := os.ReadFile(f); err == nil && len(bytes.TrimSpace(b)) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	tok := NewToken()
	return tok, writeOwned(f, []byte(tok+"\n"), 0, gid, 0o600)
}

func writeOwned(file string, data []byte, uid, gid int, mode os.FileMode) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Chown(tmp, uid, gid); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

func groupID(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, fmt.Errorf("adoption: ramjet's group %q: %w (install ramjet's package, or name it with --ramjet-group)", name, err)
	}
	return strconv.Atoi(g.Gid)
}

// ErrAdopted is returned by Apply when a backup of an adoption not
// rolled back is in the way.
var ErrAdopted = errors.New("already adopted: ramjet adopt --rollback first")

// Apply writes ramjet's configuration and the tokens, runs the shadow
// check and switches (see Switch). With shadowOnly it stops after the
// shadow check and changes nothing of the web server.
func (j *Job) Apply(ctx context.Context, stdout, stderr io.Writer, shadowOnly bool) error {
	if err := j.serviceConf(); err != nil {
		return err
	}
	if j.Out == "" || j.Out == "-" {
		return fmt.Errorf("--apply needs --out FILE: the configuration ramjet serves")
	}
	if _, err := os.Stat(filepath.Join(j.Backup, manifestName)); err == nil {
		return fmt.Errorf("%s: %w", j.Backup, ErrAdopted)
	}
	if err := j.addressesFree(ctx); err != nil {
		return err
	}
	if err := os.MkdirAll(j.Backup, 0o700); err != nil {
		return fmt.Errorf("adoption: backup: %w", err)
	}
	if j.Service == nil {
		_, err := j.apply(ctx, stdout, stderr, shadowOnly, nil)
		return err
	}
	svc, err := j.Service.State(ctx, j.Backup)
	if err != nil {
		return err
	}
	serving, err := j.apply(ctx, stdout, stderr, shadowOnly, &svc)
	if !serving {
		err = errors.Join(err, j.Service.Restore(ctx, svc))
	}
	return err
}

// serviceConf refuses an --out other than the unit's configuration (the
// unit would not read it), and has the configuration written in the
// backup first: the unit's file is replaced only when the unit restarts
// (the running unit watches it).
func (j *Job) serviceConf() error {
	if j.Service == nil {
		return nil
	}
	if j.Out != "" && j.Out != "-" && filepath.Clean(j.Out) != j.Service.Conf {
		return fmt.Errorf("--out %s: %s reads %s (ramjet serves as that unit after the switch)", j.Out, j.Service.Unit, j.Service.Conf)
	}
	j.Out = filepath.Join(j.Backup, "ramjet.yaml")
	return nil
}

// addressesFree refuses an origin or admin address something listens
// on; the admin address of the running unit is not in the way (the
// unit restarts with the written configuration).
func (j *Job) addressesFree(ctx context.Context) error {
	addrs := map[string]string{"--origin": j.Origin, "--admin (ramjet's admin listener)": j.Admin}
	if j.Service != nil && j.Service.Active(ctx) {
		delete(addrs, "--admin (ramjet's admin listener)")
	}
	for what, addr := range addrs {
		if addr != "" && dial(ctx, addr) == nil {
			return fmt.Errorf("%s %s: something listens there already", what, addr)
		}
	}
	return nil
}

// apply is Apply once the backup directory (and the unit's state) is
// kept; the unit's state is put back by the caller unless ramjet
// serves (serving).
func (j *Job) apply(ctx context.Context, stdout, stderr io.Writer, shadowOnly bool, svc *ServiceState) (serving bool, err error) {
	p, err := j.Write(stdout, stderr)
	if err != nil {
		return false, err
	}
	both, moved, err := j.versions(p)
	if err != nil {
		return false, err
	}
	orig := map[string][]byte{}
	for f := range moved {
		orig[f] = j.Files[f]
	}
	for f := range both {
		orig[f] = j.Files[f]
	}
	m := Manifest{Server: j.Server, Bin: j.Bin, Conf: j.Conf, RamjetConf: j.Out, Origin: p.Origin,
		Listens: p.Listens(), Service: svc}
	if svc != nil {
		m.RamjetConf = j.Service.Conf
	}
	b, err := SaveBackup(j.Backup, m, orig, both, moved)
	if err != nil {
		return false, err
	}
	sw := &Switch{Web: j.Web, Plan: p, Files: orig, Both: both, Moved: moved, Backup: b, Log: stderr, ShadowOnly: shadowOnly,
		Check:  func(ctx context.Context) error { return j.Check(ctx, j.Out) },
		Shadow: func(ctx context.Context) error { return j.shadow(ctx, p, stderr) },
		Start:  Ramjet{Bin: j.Ramjet, Args: []string{"serve", "--config", j.Out}, Log: filepath.Join(j.Backup, "ramjet.log")}.StartOn}
	if j.Service != nil {
		sw.Serve = func(ctx context.Context, listens []string) (int, error) { return j.Service.Start(ctx, j.Out, listens) }
	}
	err = sw.Run(ctx)
	if err != nil && b.RamjetPID > 0 {
		return true, err // ramjet serves beside the web server: nothing to put back
	}
	if err != nil || shadowOnly {
		// Nothing of the web server changed: the backup is not one to
		// roll back to.
		return false, errors.Join(err, os.Remove(filepath.Join(j.Backup, manifestName)))
	}
	if j.Service != nil {
		fmt.Fprintf(stderr, "ramjet adopt: ramjet serves as %s (enabled, on %s), reading %s\n", j.Service.Unit, filepath.Base(j.Service.Socket), j.Service.Conf)
	}
	fmt.Fprintf(stderr, "ramjet adopt: done; the backup is %s (ramjet adopt --rollback --backup %s)\n", j.Backup, j.Backup)
	return true, nil
}

// shadow starts ramjet on a preview port with the plan's configuration
// (plain HTTP only, no admin listener) and compares every site through
// it with the web server.
func (j *Job) shadow(ctx context.Context, p *Plan, stderr io.Writer) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	preview := *p
	preview.Listen, preview.ListenAlso, preview.Socket, preview.Admin = port, nil, "", ""
	if p.TLSListen != "" {
		if preview.TLSListen, err = freePort(); err != nil {
			return err
		}
	}
	file := filepath.Join(j.Backup, "preview.yaml")
	var buf bytes.Buffer
	if err := preview.WriteConfig(&buf, NewToken()); err != nil {
		return err
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("adoption: preview config: %w", err)
	}
	log, err := os.Create(filepath.Join(j.Backup, "preview.log"))
	if err != nil {
		return fmt.Errorf("adoption: preview log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(j.Ramjet, "serve", "--config", file)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("adoption: preview ramjet: %w", err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM) // a preview: nothing to drain
		_ = cmd.Wait()                          // its exit status says nothing about the check
	}()
	if err := WaitListening(ctx, port); err != nil {
		return fmt.Errorf("adoption: preview ramjet (log %s): %w", log.Name(), err)
	}
	checked := 0
	for _, h := range p.Hosts {
		if !h.Excluded {
			checked++
		}
	}
	fmt.Fprintf(stderr, "ramjet adopt: shadow check: %d sites through ramjet on %s and directly (%d left out)\n", checked, port, len(p.Hosts)-checked)
	diffs := (&Shadow{Preview: port, PreviewTLS: preview.TLSListen, Plan: p, Paths: ShadowPaths}).Compare(ctx)
	if len(diffs) == 0 {
		fmt.Fprintf(stderr, "ramjet adopt: shadow check: every site answers alike\n")
		return nil
	}
	var lines []string
	for _, d := range diffs {
		lines = append(lines, "  "+d.String())
	}
	return fmt.Errorf("shadow check: %d sites answer differently through ramjet (leave them out with --exclude NAME, or fix them):\n%s", len(diffs), strings.Join(lines, "\n"))
}
