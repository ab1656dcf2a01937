package apache

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ramjet-proxy/ramjet/adoption"
)

// Binary runs Apache's tool (apache2ctl, or the apache2 binary itself)
// on one configuration file.
type Binary struct {
	Path string // "/usr/sbin/apache2ctl"
	Conf string // its -f
}

func (b Binary) run(ctx context.Context, args ...string) ([]byte, error) {
	argv := append([]string{"-d", filepath.Dir(b.Conf), "-f", b.Conf}, args...)
	cmd := exec.CommandContext(ctx, b.Path, argv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", b.Path, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.Bytes(), nil
}

// Test checks the configuration on disk (apachectl configtest).
func (b Binary) Test(ctx context.Context) error {
	_, err := b.run(ctx, "-t")
	return err
}

// Reload restarts Apache gracefully: its listening sockets stay open
// across the restart, those the new configuration drops are closed.
func (b Binary) Reload(ctx context.Context) error {
	_, err := b.run(ctx, "-k", "graceful")
	return err
}

// Runtime is what `apache2 -S` says about the configuration in effect.
type Runtime struct {
	ServerRoot string
	PidFile    string
	// VirtualHosts are "FILE:LINE" of each <VirtualHost> in effect.
	VirtualHosts map[string]bool
}

// runtimePatterns read `apache2 -S`, compiled on first use: only
// `ramjet adopt` reads it, and every other process would hold them.
var runtimePatterns = sync.OnceValues(func() (vhostAt, runtimeVar *regexp.Regexp) {
	return regexp.MustCompile(`\((/[^()]*:\d+)\)\s*$`), regexp.MustCompile(`^(ServerRoot|PidFile): "(.*)"$`)
})

// Runtime runs `apache2 -S`: Apache must accept the configuration.
func (b Binary) Runtime(ctx context.Context) (*Runtime, error) {
	out, err := b.run(ctx, "-S")
	if err != nil {
		return nil, err
	}
	return ParseRuntime(out), nil
}

// ParseRuntime reads the output of `apache2 -S`.
func ParseRuntime(out []byte) *Runtime {
	r := &Runtime{VirtualHosts: map[string]bool{}}
	vhostAt, runtimeVar := runtimePatterns()
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := vhostAt.FindStringSubmatch(line); m != nil {
			r.VirtualHosts[m[1]] = true
		}
		if m := runtimeVar.FindStringSubmatch(line); m != nil {
			if m[1] == "ServerRoot" {
				r.ServerRoot = m[2]
			} else {
				r.PidFile = m[2]
			}
		}
	}
	return r
}

// Load reads the configuration as Apache does: -S for what is in
// effect, then the main file and its includes.
func (b Binary) Load(ctx context.Context, pools map[string]string) (*Config, error) {
	rt, err := b.Runtime(ctx)
	if err != nil {
		return nil, err
	}
	c := &Config{Main: b.Conf, Runtime: rt, Files: map[string][]byte{}}
	tree, err := c.parseFile(b.Conf, 0)
	if err != nil {
		return nil, err
	}
	c.Tree = tree
	c.read(pools)
	return c, c.checkDuplicates()
}

const maxIncludeDepth = 32

func (c *Config) parseFile(name string, depth int) ([]*Directive, error) {
	src, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("apache: %w", err)
	}
	c.Files[name] = src
	ds, err := Parse(name, src)
	if err != nil {
		return nil, err
	}
	return c.expand(ds, depth)
}

// expand replaces Include and IncludeOptional by the files they name,
// in Apache's order (sorted; a directory's files).
func (c *Config) expand(ds []*Directive, depth int) ([]*Directive, error) {
	var out []*Directive
	for _, d := range ds {
		if !d.Is("Include") && !d.Is("IncludeOptional") {
			if d.IsBlock {
				inner, err := c.expand(d.Block, depth)
				if err != nil {
					return nil, err
				}
				d.Block = inner
			}
			out = append(out, d)
			continue
		}
		if len(d.Args) != 1 || depth >= maxIncludeDepth {
			return nil, fmt.Errorf("%s:%d: %s: one file or pattern, %d levels deep at most", d.File, d.Line, d.Name, maxIncludeDepth)
		}
		files, err := c.included(d.Args[0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s %s: %w", d.File, d.Line, d.Name, d.Args[0], err)
		}
		for _, f := range files {
			inner, err := c.parseFile(f, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
		}
	}
	return out, nil
}

func (c *Config) included(pat string) ([]string, error) {
	if !filepath.IsAbs(pat) {
		pat = filepath.Join(c.Runtime.ServerRoot, pat)
	}
	matches, err := filepath.Glob(pat)
	if err != nil {
		return nil, err
	}
	slices.Sort(matches)
	var files []string
	for _, m := range matches {
		st, err := os.Stat(m)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, m)
			continue
		}
		inner, err := c.included(filepath.Join(m, "*"))
		if err != nil {
			return nil, err
		}
		files = append(files, inner...)
	}
	return files, nil
}

// Lend duplicates Apache's listening sockets on addrs for ramjet (see
// adoption.Lender): Apache's main process is the one in its PidFile.
func (b Binary) Lend(ctx context.Context, addrs []string) ([]*os.File, error) {
	rt, err := b.Runtime(ctx)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(rt.PidFile)
	if err != nil {
		return nil, fmt.Errorf("apache: its pid: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("apache: its pid file %s: %w", rt.PidFile, err)
	}
	return adoption.TakeListeners(pid, addrs)
}
