package conf

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads the file at path and parses it with Parse. It returns the raw
// bytes too, also when they do not parse, so a caller can skip a reload
// (or a repeated complaint) when the bytes have not changed.
func Load(path string) (*Config, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("conf: %w", err)
	}
	cfg, err := Parse(data, path)
	return cfg, data, err
}

// Parse decodes one YAML document over Default and validates the result.
// Unknown keys, values of the wrong kind and failed Validate checks are
// all reported, sorted by line, as errors.Join of *Error, each printed as
// "filename:line: path: message". An empty document yields Default().
// Parse lower-cases Hosts[i].Names, TLS.Hosts[i].Names and
// Cache.Compress.Types.
func Parse(data []byte, filename string) (*Config, error) {
	cfg := Default()
	d := &decoder{lines: map[string]int{}}
	if root := d.document(data); root != nil {
		d.decodeValue(root, reflect.ValueOf(cfg).Elem(), "")
		d.decodeHosts(cfg)
	}
	for i, t := range cfg.Cache.Compress.Types {
		cfg.Cache.Compress.Types[i] = strings.ToLower(t)
	}
	for _, h := range cfg.TLS.Hosts {
		for j, name := range h.Names {
			h.Names[j] = strings.ToLower(name)
		}
	}
	errs := d.errs
	for _, err := range flatten(cfg.Validate()) {
		errs = append(errs, asError(err))
	}
	if len(errs) == 0 {
		return cfg, nil
	}
	for _, err := range errs {
		e := err.(*Error)
		e.File = filename
		if e.Line == 0 {
			e.Line = d.line(e.Path)
		}
	}
	slices.SortStableFunc(errs, func(a, b error) int { return cmp.Compare(a.(*Error).Line, b.(*Error).Line) })
	return nil, errors.Join(errs...)
}

// ErrorAt is err as a problem of the key at path in the file data was
// read from (Load's bytes): what a caller that checks more than Parse can
// (rule files that must compile) reports as FILE:LINE: path: message.
func ErrorAt(data []byte, filename, path string, err error) *Error {
	d := &decoder{lines: map[string]int{}}
	if root := d.document(data); root != nil {
		cfg := Default()
		d.decodeValue(root, reflect.ValueOf(cfg).Elem(), "")
		d.decodeHosts(cfg)
	}
	return &Error{File: filename, Line: d.line(path), Path: path, Msg: err.Error(), Err: err}
}

// decoder walks a yaml.Node tree into a Config, collecting every problem.
type decoder struct {
	lines map[string]int // key path -> line where it was set
	errs  []error        // all *Error
	hosts *yaml.Node     // the hosts list, decoded last over Defaults
}

var (
	durationType  = reflect.TypeFor[Duration]()
	accessLogType = reflect.TypeFor[AccessLog]()
	sizeType      = reflect.TypeFor[Size]()
	hostsType     = reflect.TypeFor[[]Host]()
	switchType    = reflect.TypeFor[Switch]()
	configType    = reflect.TypeFor[Config]()
)

// document returns the top-level mapping of data, or nil if there is
// nothing to decode.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err != io.EOF {
			d.syntax(err)
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil && len(extra.Content) > 0 && !isNull(extra.Content[0]):
		d.failAt(extra.Content[0].Line, "", "only one YAML document is allowed")
	case err != nil && err != io.EOF:
		d.syntax(err)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		d.failAt(root.Line, "", "expected a mapping of keys at top level, got "+describe(root))
		return nil
	}
	return root
}

// syntax records a yaml.v3 syntax error. yaml.v3 has no structured
// position for these, only a "yaml: line N: " prefix, so read that.
func (d *decoder) syntax(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if l, aerr := strconv.Atoi(n); aerr == nil {
				line, msg = l, after
			}
		}
	}
	d.errs = append(d.errs, &Error{Line: line, Msg: msg, Err: err})
}

func (d *decoder) fail(path, msg string) { d.failAt(0, path, msg) }

func (d *decoder) failAt(line int, path, msg string) {
	d.errs = append(d.errs, &Error{Line: line, Path: path, Msg: msg})
}

func (d *decoder) failErr(path string, err error) {
	d.errs = append(d.errs, &Error{Path: path, Msg: err.Error(), Err: err})
}

// line returns where path, or the nearest enclosing key, was set.
func (d *decoder) line(path string) int {
	for p := path; p != ""; p = parent(p) {
		if l, ok := d.lines[p]; ok {
			return l
		}
	}
	return 0
}

// parent strips the last ".key" or "[i]" from a path.
func parent(path string) string {
	return path[:max(strings.LastIndexAny(path, ".["), 0)]
}

// decodeValue decodes n into v, whose type is one the schema uses.
func (d *decoder) decodeValue(n *yaml.Node, v reflect.Value, path string) {
	n = deref(n)
	switch v.Type() {
	case hostsType:
		d.hosts = n
		return
	case accessLogType:
		if n.Kind == yaml.ScalarNode && n.Value == "off" { // nginx's "access_log off": no file
			v.FieldByName("Path").SetString("")
			return
		}
	case switchType:
		d.decodeSwitch(n, v, path)
		return
	case durationType:
		if s, ok := d.scalar(n, path, "a duration"); ok {
			x, err := ParseDuration(s)
			d.set(v, int64(x), path, err)
		}
		return
	case sizeType:
		if s, ok := d.scalar(n, path, "a size"); ok {
			x, err := ParseSize(s)
			d.set(v, int64(x), path, err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.String:
		if isNull(n) {
			v.SetString("")
		} else if s, ok := d.scalar(n, path, "a string"); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		d.decodeBool(n, v, path)
	case reflect.Int:
		if s, ok := d.scalar(n, path, "an integer"); ok {
			x, err := strconv.Atoi(s)
			if err != nil {
				err = fmt.Errorf("%q is not an integer", s)
			}
			d.set(v, int64(x), path, err)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			d.decodeStructs(n, v, path)
		} else {
			d.decodeStrings(n, v, path)
		}
	default:
		panic(fmt.Sprintf("conf: %s has unsupported type %s", path, v.Type()))
	}
}

func (d *decoder) set(v reflect.Value, x int64, path string, err error) {
	if err != nil {
		d.failErr(path, err)
		return
	}
	v.SetInt(x)
}

// scalar returns the text of n, which must be a non-null scalar.
func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.fail(path, "expected "+want+", got "+describe(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) decodeBool(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "true or false")
	if !ok {
		return
	}
	switch strings.ToLower(s) {
	case "true":
		v.SetBool(true)
	case "false":
		v.SetBool(false)
	default:
		d.fail(path, fmt.Sprintf("%q is not true or false", s))
	}
}

// decodeSwitch reads on/off (as Apache and nginx spell it) or
// true/false.
func (d *decoder) decodeSwitch(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "on or off")
	if !ok {
		return
	}
	switch strings.ToLower(s) {
	case "on", "true":
		v.SetBool(true)
	case "off", "false":
		v.SetBool(false)
	default:
		d.fail(path, fmt.Sprintf("%q is not on or off", s))
	}
}

// decodeStruct decodes a mapping into the fields of v, by yaml tag.
func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(path, "expected a mapping, got "+describe(n))
		return
	}
	fields := fieldsOf(v.Type())
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			d.failAt(k.Line, path, "expected a key name, got "+describe(k))
			continue
		}
		kp := join(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.failAt(k.Line, kp, fmt.Sprintf("already set on line %d", first))
			continue
		}
		seen[k.Value] = k.Line
		d.lines[kp] = k.Line
		idx, ok := fields[k.Value]
		if !ok {
			d.fail(kp, "unknown key")
			continue
		}
		if kp == "listen" && v.Type() == configType {
			d.decodeListen(deref(n.Content[i+1]), v.Addr().Interface().(*Config))
			continue
		}
		d.decodeValue(n.Content[i+1], v.FieldByIndex(idx), kp)
	}
}

// decodeStrings decodes a list of scalars. An empty list becomes nil.
func (d *decoder) decodeStrings(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		v.SetZero()
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(path, "expected a list, got "+describe(n))
		return
	}
	var out []string
	for i, item := range n.Content {
		ip := path + "[" + strconv.Itoa(i) + "]"
		d.lines[ip] = item.Line
		if s, ok := d.scalar(deref(item), ip, "a string"); ok {
			out = append(out, s)
		}
	}
	v.Set(reflect.ValueOf(out))
}

// decodeStructs decodes a list of mappings, one element each. An empty
// list becomes nil.
func (d *decoder) decodeStructs(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) || n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
		v.SetZero()
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(path, "expected a list, got "+describe(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		ip := path + "[" + strconv.Itoa(i) + "]"
		d.lines[ip] = item.Line
		d.decodeValue(item, out.Index(i), ip)
	}
	v.Set(out)
}

// decodeHosts decodes each host block over a copy of cfg.Defaults, so
// hosts inherit defaults wherever they appear in the file.
func (d *decoder) decodeHosts(cfg *Config) {
	n := d.hosts
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail("hosts", "expected a list, got "+describe(n))
		return
	}
	for i, item := range n.Content {
		p := "hosts[" + strconv.Itoa(i) + "]"
		d.lines[p] = item.Line
		h := Host{Site: cfg.Defaults.clone(), AccessLog: cfg.AccessLog}
		d.decodeValue(item, reflect.ValueOf(&h).Elem(), p)
		for j, name := range h.Names {
			h.Names[j] = strings.ToLower(name)
		}
		cfg.Hosts = append(cfg.Hosts, h)
	}
}

// fieldsOf maps yaml keys to field indexes, flattening ",inline" fields.
func fieldsOf(t reflect.Type) map[string][]int {
	m := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opt, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opt == "inline" {
			for k, idx := range fieldsOf(f.Type) {
				m[k] = append([]int{i}, idx...)
			}
			continue
		}
		if name != "" && name != "-" { // "-": set from another key (ListenAlso)
			m[name] = f.Index
		}
	}
	return m
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// deref follows aliases to the anchored node.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; i < 10 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what n is, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "an unexpected node"
}
