package wpsite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ramjet-proxy/ramjet/internal/termtext"
)

// DefaultPluginDir is where the Debian package installs the companion
// plugin.
const DefaultPluginDir = "/usr/share/ramjet/wordpress/ramjet-cache"

// Manager enables and disables page caching in installs.
type Manager struct {
	PHP PHP
	// PluginDir holds ramjet-cache (its ramjet-cache.php); ""
	// = DefaultPluginDir. It must be readable by every install's owner.
	PluginDir string
	// AdminURL is ramjet's admin API as WordPress reaches it
	// (http://127.0.0.1:9090): where the plugin sends its purges.
	AdminURL string
}

// Probe asks each install, as its owner, which cache plugin it runs; a
// target that cannot be asked keeps its error in Status.Error.
func (m Manager) Probe(ctx context.Context, targets []Target) {
	for i := range targets {
		st, err := m.PHP.run(ctx, targets[i].Install, m.request("status", targets[i]))
		if err != nil {
			st.Error = err.Error()
		}
		targets[i].Status = st
	}
}

// request is what wp.php is given for action on t. Only enable gets the
// site's token: a scan, a disable or enable's check shows it to no PHP,
// whatever site the install turns out to be.
func (m Manager) request(action string, t Target) request {
	r := request{Action: action, PluginSrc: m.pluginDir(), AdminURL: m.AdminURL}
	if t.Site != nil {
		r.Host = t.Site.Name
		if action == "enable" {
			r.Token = t.Site.Token
		}
	}
	return r
}

func (m Manager) pluginDir() string {
	if m.PluginDir == "" {
		return DefaultPluginDir
	}
	return m.PluginDir
}

// Enable turns caching on in every target, as its owner: the stock
// LiteSpeed Cache plugin when it is the active one, else ramjet-cache
// with the site's token. Every target is checked first (a site and its
// token, its owner, its wp-config.php, its database, the plugin to copy);
// if any fails, nothing is changed and the problems are returned
// together. out gets one line per install enabled.
func (m Manager) Enable(ctx context.Context, targets []Target, out io.Writer) error {
	var problems []error
	for i := range targets {
		if err := m.check(ctx, &targets[i]); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("nothing changed:\n%w", errors.Join(problems...))
	}
	for _, t := range targets {
		st, err := m.PHP.run(ctx, t.Install, m.request("enable", t))
		if err != nil {
			problems = append(problems, err)
			continue
		}
		fmt.Fprintf(out, "%s\t%s\tenabled %s as %s\n", t.siteName(), Shown(t.Path), Shown(st.Cache), Shown(t.Owner.Name))
		if st.TokenConstant && st.Cache == "ramjet-cache" {
			fmt.Fprintf(out, "%s\t%s\twarning: wp-config.php defines RAMJET_ADMIN_TOKEN, which wins over the site token\n", t.siteName(), Shown(t.Path))
		}
	}
	return errors.Join(problems...)
}

// check says why t cannot be enabled, probing it as its owner.
func (m Manager) check(ctx context.Context, t *Target) error {
	switch {
	case t.OptOut != "":
		return fmt.Errorf("%s: opted out by %s (remove it to enable)", t.Path, filepath.Join(t.Path, t.OptOut))
	case t.Unmatched != nil:
		return t.Unmatched
	case t.Site == nil:
		return fmt.Errorf("%s: no hosts[] entry has it under its docroot.root or htaccess_root, so it has no site token", t.Path)
	case t.Site.TokenErr != nil:
		return fmt.Errorf("%s (%s): %w", t.Path, t.Site.Name, t.Site.TokenErr)
	case t.Site.Token == "":
		return fmt.Errorf("%s (%s): the site has no admin_token or admin_token_file to give its WordPress", t.Path, t.Site.Name)
	case m.AdminURL == "":
		return errors.New("no admin URL: admin.listen is off and --admin is not given")
	}
	st, err := m.PHP.run(ctx, t.Install, m.request("status", *t))
	if err != nil {
		return err
	}
	t.Status = st
	if st.Cache != "litespeed-cache" && st.Enabled != "litespeed-cache" {
		if _, err := os.Stat(filepath.Join(m.pluginDir(), "ramjet-cache.php")); err != nil {
			return fmt.Errorf("the ramjet-cache plugin: %w (the ramjet package installs it in %s)", err, DefaultPluginDir)
		}
	}
	return nil
}

// Disable undoes what Enable did in each target, as its owner; an install
// Enable never touched is left as it is. out gets one line per install.
func (m Manager) Disable(ctx context.Context, targets []Target, out io.Writer) error {
	var problems []error
	for _, t := range targets {
		before, err := m.PHP.run(ctx, t.Install, m.request("status", t))
		if err == nil && before.Enabled == "" {
			fmt.Fprintf(out, "%s\t%s\tnot enabled by ramjet wp: left as it is\n", t.siteName(), Shown(t.Path))
			continue
		}
		if err == nil {
			_, err = m.PHP.run(ctx, t.Install, m.request("disable", t))
		}
		if err != nil {
			problems = append(problems, err)
			continue
		}
		fmt.Fprintf(out, "%s\t%s\tdisabled %s\n", t.siteName(), Shown(t.Path), Shown(before.Enabled))
	}
	return errors.Join(problems...)
}

// Shown is s, a name or answer an install's owner controls, as one field
// of a line in a terminal: its control characters (newlines and tabs
// too, which would make lines or columns of their own) as escapes.
func Shown(s string) string { return termtext.Clean(s, "") }

func (t Target) siteName() string {
	if t.Site == nil {
		return "-"
	}
	return t.Site.Name
}
