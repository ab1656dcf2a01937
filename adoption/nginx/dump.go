package nginx

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Dump is a configuration as `nginx -T` prints it: every file nginx
// read, in the order it read them, as it read them.
type Dump struct {
	Main  string
	Files map[string][]byte
	Order []string
}

const dumpHeader = "# configuration file "

// ParseDump splits the output of `nginx -T`. nginx prints each file as
// a header line, the file's bytes, and a newline.
func ParseDump(out []byte) (*Dump, error) {
	d := &Dump{Files: map[string][]byte{}}
	var cur string
	var body []byte
	flush := func() {
		if cur != "" {
			d.Files[cur] = bytes.TrimSuffix(body, []byte("\n"))
		}
	}
	for line := range bytes.Lines(out) {
		s := string(line)
		if name, ok := strings.CutPrefix(strings.TrimRight(s, "\n"), dumpHeader); ok && strings.HasSuffix(name, ":") {
			name = strings.TrimSuffix(name, ":")
			if _, seen := d.Files[name]; !seen && filepath.IsAbs(name) {
				flush()
				cur, body = name, nil
				d.Order = append(d.Order, name)
				if d.Main == "" {
					d.Main = name
				}
				continue
			}
		}
		if cur == "" {
			continue // nginx's own messages before the first file
		}
		body = append(body, line...)
	}
	flush()
	if d.Main == "" {
		return nil, fmt.Errorf("nginx -T printed no configuration file")
	}
	return d, nil
}

// maxIncludeDepth bounds nested includes (a file including itself).
const maxIncludeDepth = 32

// Tree parses the main file with its includes expanded in place: each
// directive keeps the file and line it came from.
func (d *Dump) Tree() ([]*Directive, error) {
	return d.parseFile(d.Main, 0)
}

func (d *Dump) parseFile(name string, depth int) ([]*Directive, error) {
	ds, err := Parse(name, d.Files[name])
	if err != nil {
		return nil, err
	}
	return d.expand(ds, depth)
}

func (d *Dump) expand(ds []*Directive, depth int) ([]*Directive, error) {
	var out []*Directive
	for _, x := range ds {
		if x.Name != "include" || x.IsBlock {
			if x.IsBlock {
				inner, err := d.expand(x.Block, depth)
				if err != nil {
					return nil, err
				}
				x.Block = inner
			}
			out = append(out, x)
			continue
		}
		if len(x.Args) != 1 {
			return nil, fmt.Errorf("%s:%d: include takes one file or pattern", x.File, x.Line)
		}
		if depth >= maxIncludeDepth {
			return nil, fmt.Errorf("%s:%d: includes nested deeper than %d", x.File, x.Line, maxIncludeDepth)
		}
		files, err := d.included(x)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			inner, err := d.parseFile(f, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
		}
	}
	return out, nil
}

// included lists the dumped files an include names, sorted as nginx's
// glob sorts them; a relative pattern is relative to the main file's
// directory (nginx's conf prefix).
func (d *Dump) included(x *Directive) ([]string, error) {
	pat := x.Args[0]
	if !filepath.IsAbs(pat) {
		pat = filepath.Join(filepath.Dir(d.Main), pat)
	}
	if !strings.ContainsAny(pat, "*?[") {
		if _, ok := d.Files[pat]; !ok {
			return nil, fmt.Errorf("%s:%d: include %s: not in nginx -T's output", x.File, x.Line, x.Args[0])
		}
		return []string{pat}, nil
	}
	var files []string
	for _, f := range d.Order {
		if ok, err := filepath.Match(pat, f); err != nil {
			return nil, fmt.Errorf("%s:%d: include %s: %w", x.File, x.Line, x.Args[0], err)
		} else if ok {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	return files, nil
}
