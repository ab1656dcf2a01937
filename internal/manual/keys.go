package manual

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Key is one key of conf/ramjet.example.yaml, the file that documents
// every key of the schema with its built-in default.
type Key struct {
	Path    string // "cache.disk.path"; list items "[]": "hosts[].names"
	Value   string // as YAML, flow style; "" for a mapping of keys
	Doc     string // its comment, one line
	Example bool   // under a list: Value is an example, not a default
}

// ExampleKeys reads the keys of the example file's text, in file order.
func ExampleKeys(example []byte) ([]Key, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(example, &doc); err != nil {
		return nil, fmt.Errorf("manual: the example config: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("manual: the example config is empty")
	}
	var keys []Key
	walkKeys(doc.Content[0], "", false, &keys)
	return keys, nil
}

func walkKeys(n *yaml.Node, path string, example bool, out *[]Key) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			kp := k.Value
			if path != "" {
				kp = path + "." + k.Value
			}
			head := k.HeadComment
			if head == "" && i == 0 {
				head = n.HeadComment // above "- key:", the list item's
			}
			key := Key{Path: kp, Doc: comment(head, k.LineComment, v.LineComment), Example: example}
			if !isSection(v) {
				key.Value = flow(v)
			}
			*out = append(*out, key)
			walkKeys(v, kp, example, out)
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if item.Kind == yaml.MappingNode {
				walkKeys(item, path+"[]", true, out)
			}
		}
	}
}

// flow writes a value node as one line of YAML.
func flow(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		items := make([]string, len(n.Content))
		for i, c := range n.Content {
			items[i] = flow(c)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case yaml.ScalarNode:
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 || n.Value == "" {
			return strconv.Quote(n.Value)
		}
		return n.Value
	}
	return "…"
}

// comment joins comment blocks into one line without their "#".
func comment(blocks ...string) string {
	var words []string
	for _, b := range blocks {
		for _, line := range strings.Split(b, "\n") {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
			if line != "" {
				words = append(words, line)
			}
		}
	}
	return strings.Join(words, " ")
}

// restartKeys are the keys (and key prefixes, ending in ".") a reload
// does not apply: the daemon's reload (cmd/ramjet, daemon.apply) logs
// that they wait for the next restart or upgrade (SIGUSR2), and the
// purge fan-out and the disk tier are set up once, at start.
var restartKeys = []string{
	"listen", "admin.", "server.", "log.format", "h2c.",
	"tls.listen", "tls.h2_max_streams", "tls.http3", "tls.h3_max_streams", "tls.h3_0rtt",
	"tls.h3_stream_window", "tls.h3_conn_window", "tls.proxy_protocol.",
	"cache.disk.", "purge.redis", "purge.node", "purge.stream", "purge.gap", "purge.gap_grace",
}

// Applies says when a change of the key at path takes effect: "reload"
// (SIGHUP, systemctl reload, or saving the file) or "restart" (the next
// start or SIGUSR2 upgrade); a section, when all its keys do.
func Applies(path string) string {
	if path == "cache.private_size" {
		return "reload (on or off: restart)"
	}
	if path == "purge.redis_keys" || path == "purge.redis_keys_file" {
		return "reload"
	}
	for _, r := range restartKeys {
		if path == r || path == strings.TrimSuffix(r, ".") || (strings.HasSuffix(r, ".") && strings.HasPrefix(path, r)) {
			return "restart"
		}
	}
	return "reload"
}

// isSection says whether n holds keys (a mapping, or a list of them)
// rather than a value.
func isSection(n *yaml.Node) bool {
	return n.Kind == yaml.MappingNode ||
		(n.Kind == yaml.SequenceNode && len(n.Content) > 0 && n.Content[0].Kind == yaml.MappingNode)
}
