package htaccess

import (
	"fmt"
	"net/netip"
	"strings"
)

// authzConf is mod_authz_core's Require tree of one scope; the deepest
// scope with one replaces its parents' (AuthMerging Off).
type authzConf struct {
	root       authzNode // an implicit <RequireAny>
	failClosed string
}

type nodeKind uint8

const (
	nodeAny nodeKind = iota
	nodeAll
	nodeNone
	nodeLeaf
)

type provider uint8

const (
	provAll provider = iota
	provIP
	provLocal
	provValidUser
	provUser
	provEnv
	provMethod
)

// authzNode is a <RequireAny>/<RequireAll>/<RequireNone> or one Require.
type authzNode struct {
	kind     nodeKind
	children []*authzNode
	limited  methodSet

	negate  bool
	prov    provider
	granted bool // provAll
	nets    []netip.Prefix
	names   []string // users, env names
	methods methodSet
}

type authzResult uint8

const (
	authzNeutral authzResult = iota
	authzGranted
	authzDenied
	authzDeniedNoUser // would be granted to the right user: ask for credentials
)

// parseRequire reads one Require line into a leaf.
func parseRequire(args []string, limit methodSet) (*authzNode, string, error) {
	n := &authzNode{kind: nodeLeaf, limited: limit}
	if len(args) > 0 && strings.EqualFold(args[0], "not") {
		n.negate, args = true, args[1:]
	}
	if len(args) == 0 {
		return nil, "", fmt.Errorf("Require: needs an entity")
	}
	name, rest := strings.ToLower(args[0]), args[1:]
	switch name {
	case "all":
		if len(rest) != 1 {
			return nil, "", fmt.Errorf("Require all: granted or denied")
		}
		switch strings.ToLower(rest[0]) {
		case "granted":
			n.prov, n.granted = provAll, true
		case "denied":
			n.prov = provAll
		default:
			return nil, "", fmt.Errorf("Require all: granted or denied, not %q", rest[0])
		}
	case "ip":
		n.prov = provIP
		for _, w := range rest {
			p, err := parseHost(w)
			if err != nil {
				return nil, "", fmt.Errorf("Require ip: %w", err)
			}
			if !p.IsValid() {
				return nil, "", fmt.Errorf("Require ip: %q is not an address or network", w)
			}
			n.nets = append(n.nets, p)
		}
		if len(n.nets) == 0 {
			return nil, "", fmt.Errorf("Require ip: needs an address")
		}
	case "local":
		n.prov = provLocal
	case "valid-user":
		n.prov = provValidUser
	case "user":
		n.prov, n.names = provUser, rest
	case "env":
		n.prov, n.names = provEnv, rest
	case "method":
		n.prov = provMethod
		for _, m := range rest {
			n.methods |= methodBit([]byte(strings.ToUpper(m)))
		}
	default:
		// host, forward-dns, group, expr, file-owner, …: ramjet cannot
		// decide them, so nothing they guard is served.
		return nil, "Require " + name + " is not supported", nil
	}
	return n, "", nil
}

// evalCtx is what a Require tree is judged against.
type evalCtx struct {
	method methodSet
	client netip.Addr
	user   string // "" before authentication
	env    envSet
}

func (n *authzNode) eval(c *evalCtx) authzResult {
	if n.limited&c.method == 0 {
		return authzNeutral
	}
	if n.kind == nodeLeaf {
		r := n.leaf(c)
		if n.negate {
			switch r {
			case authzGranted:
				return authzDenied
			case authzDenied:
				return authzNeutral
			}
		}
		return r
	}
	var granted, denied, noUser bool
	for _, ch := range n.children {
		switch ch.eval(c) {
		case authzGranted:
			granted = true
		case authzDenied:
			denied = true
		case authzDeniedNoUser:
			noUser = true
		}
	}
	switch n.kind {
	case nodeAll:
		switch {
		case denied:
			return authzDenied
		case noUser:
			return authzDeniedNoUser
		case granted:
			return authzGranted
		}
	case nodeNone:
		if granted {
			return authzDenied
		}
	default: // any
		switch {
		case granted:
			return authzGranted
		case noUser:
			return authzDeniedNoUser
		case denied:
			return authzDenied
		}
	}
	return authzNeutral
}

func (n *authzNode) leaf(c *evalCtx) authzResult {
	yes := func(b bool) authzResult {
		if b {
			return authzGranted
		}
		return authzDenied
	}
	switch n.prov {
	case provAll:
		return yes(n.granted)
	case provIP:
		for _, p := range n.nets {
			if p.Contains(c.client) {
				return authzGranted
			}
		}
		return authzDenied
	case provLocal:
		return yes(c.client.IsLoopback())
	case provMethod:
		return yes(n.methods&c.method != 0)
	case provEnv:
		for _, name := range n.names {
			if c.env.has(name) {
				return authzGranted
			}
		}
		return authzDenied
	case provValidUser:
		if c.user == "" {
			return authzDeniedNoUser
		}
		return authzGranted
	case provUser:
		if c.user == "" {
			return authzDeniedNoUser
		}
		for _, u := range n.names {
			if u == c.user {
				return authzGranted
			}
		}
		return authzDenied
	}
	return authzDenied
}

// needsUser reports whether the tree can ask for credentials.
func (n *authzNode) needsUser() bool {
	if n.kind == nodeLeaf {
		return n.prov == provValidUser || n.prov == provUser
	}
	for _, ch := range n.children {
		if ch.needsUser() {
			return true
		}
	}
	return false
}

// authConf is the Basic authentication of a scope, merged field by
// field from the scopes above.
type authConf struct {
	authType, authName, userFile string
	typeSet, nameSet, fileSet    bool
	failClosed                   string
}
