package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/internal/termtext"
	"github.com/ramjet-proxy/ramjet/wpsite"
)

// wpFlags are the flags every wp subcommand takes.
type wpFlags struct {
	fs        *flag.FlagSet
	config    string
	roots     listFlag
	depth     int
	all       bool
	php       string
	pluginDir string
	admin     string
	sites     []wpsite.Site // from the config, once loaded
}

func newWPFlags(name string, stderr io.Writer) *wpFlags {
	f := &wpFlags{fs: flag.NewFlagSet("wp "+name, flag.ContinueOnError)}
	f.fs.SetOutput(stderr)
	f.fs.StringVar(&f.config, "config", "", "ramjet config: its hosts[] name the installs, hold their tokens and roots")
	f.fs.StringVar(&f.config, "c", "", "short for --config")
	f.fs.Var(&f.roots, "root", "directory to search for WordPress installs (repeatable; the config's docroots are searched too)")
	f.fs.IntVar(&f.depth, "depth", 4, "how many directories below a root to search")
	f.fs.StringVar(&f.php, "php", "php", "php-cli binary")
	if name != "scan" {
		f.fs.BoolVar(&f.all, "all", false, "every install found")
	}
	if name == "enable" {
		f.fs.StringVar(&f.pluginDir, "plugin-dir", wpsite.DefaultPluginDir, "the ramjet-cache plugin to install")
		f.fs.StringVar(&f.admin, "admin", "", "ramjet's admin URL as WordPress reaches it (default: from the config's admin.listen)")
	}
	return f
}

// wpCmd runs `ramjet wp scan|enable|disable`.
func wpCmd(args []string, stdout, stderr io.Writer) int {
	stdout, stderr = shownWriter{stdout}, shownWriter{stderr}
	if len(args) == 0 || (args[0] != "scan" && args[0] != "enable" && args[0] != "disable") {
		fmt.Fprint(stderr, "usage: ramjet wp scan|enable|disable [-c FILE] [--root DIR]... [--all | SITE...]\n")
		return 2
	}
	f := newWPFlags(args[0], stderr)
	if err := f.fs.Parse(args[1:]); err != nil {
		return 2
	}
	if args[0] != "scan" && f.all == (f.fs.NArg() > 0) {
		fmt.Fprintf(stderr, "ramjet wp %s: name the sites (names or directories), or --all\n", args[0])
		return 2
	}
	targets, m, code := f.load(stderr)
	if code != 0 {
		return code
	}
	// ^C or SIGTERM cancels: the PHP under way is killed; an enable cut
	// short has written its state first, so disable undoes it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if args[0] == "scan" {
		m.Probe(ctx, targets)
		printTargets(stdout, stderr, targets)
		return 0
	}
	if !f.all {
		picked, unknown := wpsite.Select(targets, f.fs.Args())
		extra, err := f.resolve(unknown)
		if err != nil {
			fmt.Fprintf(stderr, "ramjet wp %s: %v\n", args[0], err)
			return 1
		}
		targets = append(picked, extra...)
	}
	var err error
	if args[0] == "enable" {
		err = m.Enable(ctx, withoutOptOuts(targets, f.all, stdout), stdout)
	} else {
		err = m.Disable(ctx, targets, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ramjet wp %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// load reads the config, finds the installs under the roots and pairs
// them with their sites.
func (f *wpFlags) load(stderr io.Writer) ([]wpsite.Target, wpsite.Manager, int) {
	m := wpsite.Manager{PHP: wpsite.PHP{Binary: f.php}, PluginDir: f.pluginDir, AdminURL: f.admin}
	if f.config != "" {
		cfg, _, err := conf.Load(f.config)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return nil, m, 1
		}
		f.sites = wpSites(cfg)
		for _, s := range f.sites {
			f.roots = append(f.roots, s.Roots...)
		}
		if m.AdminURL == "" && cfg.Admin.Listen != "" {
			m.AdminURL = adminURL(cfg.Admin.Listen)
		}
	}
	if len(f.roots) == 0 {
		fmt.Fprintln(stderr, "ramjet wp: nowhere to search: give --root DIR or -c CONFIG (its hosts' docroot.root and htaccess_root)")
		return nil, m, 2
	}
	installs, problems, err := wpsite.Find(f.roots, f.depth)
	if err != nil {
		fmt.Fprintln(stderr, "ramjet", err)
		return nil, m, 1
	}
	for _, p := range problems {
		fmt.Fprintln(stderr, "ramjet wp: skipped:", p)
	}
	return wpsite.Match(installs, f.sites), m, 0
}

// resolve finds the installs named by directories outside the searched
// roots; a name that is neither a site nor a directory, or a directory
// that is no WordPress, is an error saying which.
func (f *wpFlags) resolve(names []string) ([]wpsite.Target, error) {
	var found []wpsite.Target
	var problems []error
	for _, name := range names {
		if _, err := os.Stat(name); err != nil {
			problems = append(problems, fmt.Errorf("%q is no site of the config and no WordPress install under %v", name, f.roots))
			continue
		}
		in, err := wpsite.Inspect(name)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		found = append(found, wpsite.Match([]wpsite.Install{in}, f.sites)...)
	}
	return found, errors.Join(problems...)
}

// wpSites maps the config's hosts to the sites wpsite matches installs
// with.
func wpSites(cfg *conf.Config) []wpsite.Site {
	var sites []wpsite.Site
	for i := range cfg.Hosts {
		h := &cfg.Hosts[i]
		s := wpsite.Site{Name: h.Names[0], Names: h.Names}
		for _, r := range []string{h.Docroot.Root, h.HtaccessRoot} {
			if r != "" {
				s.Roots = append(s.Roots, r)
			}
		}
		s.Token, s.TokenErr = h.SiteToken()
		sites = append(sites, s)
	}
	return sites
}

// withoutOptOuts drops opted-out installs from an --all run, saying so;
// a site named on the command line stays, and Enable refuses it.
func withoutOptOuts(targets []wpsite.Target, all bool, out io.Writer) []wpsite.Target {
	if !all {
		return targets
	}
	var keep []wpsite.Target
	for _, t := range targets {
		if t.OptOut != "" {
			fmt.Fprintf(out, "%s\t%s\tskipped: opted out by %s\n", siteOf(t), wpsite.Shown(t.Path), t.OptOut)
			continue
		}
		keep = append(keep, t)
	}
	return keep
}

// shownWriter writes what tenants control (their directories' names, their
// PHP's output in an error) to the admin's terminal, where ramjet wp runs
// as root, with its control characters but newline and tab shown as
// escapes.
type shownWriter struct{ w io.Writer }

func (s shownWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, termtext.Clean(string(p), "\t\n")); err != nil {
		return 0, err
	}
	return len(p), nil
}

func printTargets(stdout, stderr io.Writer, targets []wpsite.Target) {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SITE\tPATH\tOWNER\tWORDPRESS\tCACHE\tOPT-OUT")
	var failed []error
	for _, t := range targets {
		cache := t.Status.Cache
		if t.Unmatched != nil {
			failed = append(failed, t.Unmatched)
		}
		switch {
		case t.Status.Error != "":
			cache = "unknown"
			failed = append(failed, errors.New(t.Status.Error))
		case cache == "":
			cache = "none"
		}
		optOut := t.OptOut
		if optOut == "" {
			optOut = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", siteOf(t), wpsite.Shown(t.Path), wpsite.Shown(t.Owner.Name), t.Version,
			wpsite.Shown(cache), optOut)
	}
	tw.Flush()
	for _, err := range failed {
		fmt.Fprintln(stderr, "ramjet wp scan:", err)
	}
}

func siteOf(t wpsite.Target) string {
	if t.Site == nil {
		return "-"
	}
	return t.Site.Name
}
