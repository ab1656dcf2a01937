package nginx

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/ramjet-proxy/ramjet/adoption"
)

// Binary runs one nginx binary on one configuration file.
type Binary struct {
	Path string // "/usr/sbin/nginx"
	Conf string // its -c
}

func (b Binary) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, b.Path, append([]string{"-c", b.Conf, "-e", "stderr"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", b.Path, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Load reads the configuration as nginx does (`nginx -T`): nginx must
// accept it.
func (b Binary) Load(ctx context.Context, pools map[string]string) (*Config, error) {
	out, err := b.run(ctx, "-T")
	if err != nil {
		return nil, err
	}
	d, err := ParseDump(out)
	if err != nil {
		return nil, err
	}
	return Read(d, pools)
}

// Test checks the configuration on disk (`nginx -t`).
func (b Binary) Test(ctx context.Context) error {
	_, err := b.run(ctx, "-t", "-q")
	return err
}

// Reload tells the running nginx to read its configuration again.
func (b Binary) Reload(ctx context.Context) error {
	_, err := b.run(ctx, "-s", "reload")
	return err
}

// Files are the configuration's files as nginx read them.
func (c *Config) Files() map[string][]byte { return c.Dump.Files }

// Sites are the server blocks' sites, in order.
func (c *Config) Sites() []adoption.Site {
	s := make([]adoption.Site, len(c.Servers))
	for i, x := range c.Servers {
		s[i] = x.Site
	}
	return s
}
