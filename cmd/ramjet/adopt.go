package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ramjet-proxy/ramjet/adoption"
	"github.com/ramjet-proxy/ramjet/adoption/apache"
	"github.com/ramjet-proxy/ramjet/adoption/nginx"
)

const adoptUsage = `usage:
  ramjet adopt nginx  [--conf FILE] [--out FILE] [--dry-run | --apply [--shadow-only]] [flags]
  ramjet adopt apache [--conf FILE] [--out FILE] [--dry-run | --apply [--shadow-only]] [flags]
  ramjet adopt --rollback [--backup DIR] [--force]
`

// adoptCmd puts ramjet in front of the host's nginx or Apache (package
// adoption), or rolls that back.
func adoptCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, adoptUsage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "nginx", "apache":
		err = adoptServer(ctx, args[0], args[1:], stdout, stderr)
	case "--rollback", "-rollback":
		err = adoptRollback(ctx, args[1:], stderr)
	default:
		fmt.Fprintf(stderr, "ramjet adopt: unknown web server %q\n%s", args[0], adoptUsage)
		return 2
	}
	var usage usageError
	switch {
	case errors.As(err, &usage):
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "ramjet adopt:", err)
		return 1
	}
	return 0
}

type usageError struct{ error }

type adoptFlags struct {
	conf, bin, pools, group, modules string
	dryRun, apply, shadowOnly        bool
	job                              adoption.Job
}

func adoptServer(ctx context.Context, server string, args []string, stdout, stderr io.Writer) error {
	f, err := parseAdopt(server, args, stderr)
	if err != nil {
		return err
	}
	j := &f.job
	pools, err := adoption.ReadPools(f.pools)
	if err != nil {
		return err
	}
	if err := f.read(ctx, server, pools); err != nil {
		return err
	}
	j.Group, j.Ramjet = f.group, executable()
	j.Check = checkRamjetConfig
	switch {
	case f.dryRun:
		return j.DryRun(stdout, stderr)
	case f.apply:
		j.Service = packageService(ctx, j.Web, stderr)
		return j.Apply(ctx, stdout, stderr, f.shadowOnly)
	}
	_, err = j.Write(stdout, stderr)
	return err
}

// parseAdopt reads adopt's command line for server (nginx or apache);
// a bad one is a usageError, reported on stderr.
func parseAdopt(server string, args []string, stderr io.Writer) (*adoptFlags, error) {
	fs := flag.NewFlagSet("adopt "+server, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := adoptFlags{job: adoption.Job{Server: server}}
	j := &f.job
	defConf, defBin := "/etc/nginx/nginx.conf", "/usr/sbin/nginx"
	if server == "apache" {
		defConf, defBin = "/etc/apache2/apache2.conf", "/usr/sbin/apache2ctl"
	}
	fs.StringVar(&f.conf, "conf", defConf, "the web server's main configuration file")
	fs.StringVar(&f.bin, server, defBin, "the web server's tool (nginx, apache2ctl)")
	fs.StringVar(&j.Out, "out", "-", "ramjet's configuration to write (- for stdout)")
	fs.StringVar(&j.Origin, "origin", "127.0.0.1:8081", "loopback address the web server moves to")
	fs.StringVar(&j.Admin, "admin", "127.0.0.1:9090", "ramjet's admin listener")
	fs.StringVar(&j.TokenDir, "token-dir", "/etc/ramjet/tokens", "directory of the per-site token files")
	fs.StringVar(&f.group, "ramjet-group", "ramjet", "ramjet's group, which reads the token files")
	fs.StringVar(&f.modules, "apache-modules", "/usr/lib/apache2/modules", "Apache's module directory (mod_remoteip.so)")
	fs.StringVar(&f.pools, "php-pools", "/etc/php/*/fpm/pool.d/*.conf", "php-fpm pool files, for each site's PHP user")
	fs.StringVar(&j.Backup, "backup", "/var/lib/ramjet/adopt", "where --apply keeps the web server's files for --rollback")
	fs.Func("exclude", "a site (any of its names) ramjet passes through uncached; repeatable or comma-separated", func(s string) error {
		j.Exclude = append(j.Exclude, strings.Split(s, ",")...)
		return nil
	})
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the change to the web server's files as a unified diff; change nothing")
	fs.BoolVar(&f.apply, "apply", false, "switch: ramjet takes the public addresses, the web server moves to --origin")
	fs.BoolVar(&f.shadowOnly, "shadow-only", false, "with --apply: stop after the shadow check, change nothing")
	if err := fs.Parse(args); err != nil {
		return nil, usageError{err}
	}
	if f.dryRun && f.apply {
		fmt.Fprintln(stderr, "ramjet adopt: --dry-run or --apply, not both")
		return nil, usageError{errors.New("usage")}
	}
	return &f, nil
}

// read reads the web server's configuration with its own tools.
func (f *adoptFlags) read(ctx context.Context, server string, pools map[string]string) error {
	j := &f.job
	j.Bin, j.Conf = f.bin, f.conf
	j.Source = server + " " + f.conf
	switch server {
	case "nginx":
		b := nginx.Binary{Path: f.bin, Conf: f.conf}
		c, err := b.Load(ctx, pools)
		if err != nil {
			return err
		}
		j.Web, j.Files, j.Sites, j.Notes, j.Edits = b, c.Files(), c.Sites(), c.Notes, c.Edits
		return nil
	}
	b := apache.Binary{Path: f.bin, Conf: f.conf}
	c, err := b.Load(ctx, pools)
	if err != nil {
		return err
	}
	j.Web, j.Files, j.Sites, j.Notes, j.Edits = b, c.Files, c.Sites(), c.Notes, c.Edits(f.modules)
	return nil
}

func adoptRollback(ctx context.Context, args []string, stderr io.Writer) error {
	dir, force, err := parseAdoptRollback(args, stderr)
	if err != nil {
		return err
	}
	b, err := adoption.OpenBackup(dir)
	if err != nil {
		return err
	}
	var web adoption.WebServer
	switch b.Server {
	case "nginx":
		web = nginx.Binary{Path: b.Bin, Conf: b.Conf}
	case "apache":
		web = apache.Binary{Path: b.Bin, Conf: b.Conf}
	default:
		return fmt.Errorf("backup %s: unknown web server %q", dir, b.Server)
	}
	return adoption.Rollback(ctx, web, b, force, stderr)
}

// parseAdoptRollback reads adopt --rollback's command line: the backup
// and whether to overwrite files edited since; a bad one is a
// usageError, reported on stderr.
func parseAdoptRollback(args []string, stderr io.Writer) (dir string, force bool, err error) {
	fs := flag.NewFlagSet("adopt --rollback", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&dir, "backup", "/var/lib/ramjet/adopt", "the backup --apply kept")
	fs.BoolVar(&force, "force", false, "roll back files edited since --apply too (their edits kept in the backup's current/)")
	if err := fs.Parse(args); err != nil {
		return "", false, usageError{err}
	}
	return dir, force, nil
}

// packageService is the package's ramjet.service when systemd runs the
// host and the unit is installed: ramjet serves as that unit after the
// switch. Apache lends its own sockets to ramjet (adoption.Lender),
// which systemd cannot take: ramjet runs outside the unit then.
func packageService(ctx context.Context, web adoption.WebServer, stderr io.Writer) *adoption.Service {
	s := adoption.PackageService
	if !s.Detect(ctx) {
		return nil
	}
	if _, lends := web.(adoption.Lender); lends {
		fmt.Fprintf(stderr, "ramjet adopt: warning: ramjet takes over Apache's own sockets and serves outside %s (stop and disable the unit)\n", s.Unit)
		return nil
	}
	return &s
}

// checkRamjetConfig is `ramjet check --config file`.
func checkRamjetConfig(_ context.Context, file string) error {
	var out bytes.Buffer
	if check([]string{"--config", file}, io.Discard, &out) != 0 {
		return errors.New(strings.TrimSpace(out.String()))
	}
	return nil
}

// executable is this binary, which adopt starts as ramjet.
func executable() string {
	if p, err := os.Executable(); err == nil {
		return p
	}
	return os.Args[0]
}
