package htaccess

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Methods, as <Limit> lists them: a bit each, HEAD counted as GET (as
// Apache does).
type methodSet uint16

const allMethods methodSet = 0xffff

var methodBits = map[string]methodSet{
	"GET": 1 << 0, "POST": 1 << 1, "PUT": 1 << 2, "DELETE": 1 << 3, "CONNECT": 1 << 4,
	"OPTIONS": 1 << 5, "TRACE": 1 << 6, "PATCH": 1 << 7, "PROPFIND": 1 << 8, "PROPPATCH": 1 << 9,
	"MKCOL": 1 << 10, "COPY": 1 << 11, "MOVE": 1 << 12, "LOCK": 1 << 13, "UNLOCK": 1 << 14,
}

const otherMethod methodSet = 1 << 15

func methodBit(m []byte) methodSet {
	switch string(m) { // no allocation: the compiler reads m in place
	case "GET", "HEAD":
		return 1
	case "POST":
		return 1 << 1
	}
	if b, ok := methodBits[string(m)]; ok {
		return b
	}
	return otherMethod
}

// accessConf is mod_access_compat's Order, Allow, Deny and Satisfy. It
// has no merger in Apache: the deepest scope that has one replaces the
// others whole.
type accessConf struct {
	order   [16]uint8 // per method bit: orderDenyAllow (0), orderAllowDeny, orderMutual
	satisfy [16]uint8 // satisfyUnset (0), satisfyAll, satisfyAny
	allows  []hostRule
	denys   []hostRule
	// failClosed says why these rules cannot be evaluated: 403.
	failClosed string
}

const (
	orderDenyAllow = iota
	orderAllowDeny
	orderMutual
)

const (
	satisfyUnset = iota
	satisfyAll
	satisfyAny
)

// hostRule is one "from" of Allow or Deny.
type hostRule struct {
	limited methodSet
	all     bool
	env     string // env=NAME ("!NAME": not set)
	nets    []netip.Prefix
}

func (a *accessConf) setOrder(arg string, limit methodSet) error {
	var o uint8
	switch strings.ToLower(arg) {
	case "deny,allow":
		o = orderDenyAllow
	case "allow,deny":
		o = orderAllowDeny
	case "mutual-failure":
		o = orderMutual
	default:
		return fmt.Errorf("Order: unknown order %q", arg)
	}
	for i := range a.order {
		if limit&(1<<i) != 0 {
			a.order[i] = o
		}
	}
	return nil
}

func (a *accessConf) setSatisfy(arg string, limit methodSet) error {
	var s uint8
	switch strings.ToLower(arg) {
	case "all":
		s = satisfyAll
	case "any":
		s = satisfyAny
	default:
		return fmt.Errorf("Satisfy: either 'any' or 'all'")
	}
	for i := range a.satisfy {
		if limit&(1<<i) != 0 {
			a.satisfy[i] = s
		}
	}
	return nil
}

// addFrom reads "from host ..." of Allow (allow true) or Deny.
func (a *accessConf) addFrom(args []string, allow bool, limit methodSet, at string) error {
	if len(args) < 2 || !strings.EqualFold(args[0], "from") {
		return fmt.Errorf("allow and deny must be followed by 'from'")
	}
	for _, w := range args[1:] {
		r := hostRule{limited: limit}
		switch lw := strings.ToLower(w); {
		case strings.HasPrefix(lw, "env="):
			r.env = w[4:]
		case lw == "all":
			r.all = true
		default:
			p, err := parseHost(w)
			if err != nil {
				return err
			}
			if !p.IsValid() {
				// A host name needs a double reverse DNS lookup per
				// request, which ramjet does not do: fail closed.
				a.failClosed = fmt.Sprintf("%s: host name %q in Allow/Deny is not supported", at, w)
				continue
			}
			r.nets = append(r.nets, p)
		}
		if allow {
			a.allows = append(a.allows, r)
		} else {
			a.denys = append(a.denys, r)
		}
	}
	return nil
}

// parseHost reads an address, a partial IPv4 address ("10.1"), a network
// ("10.1.0.0/255.255.0.0", "10.1.0.0/16"); the zero prefix and no error
// for what looks like a host name.
func parseHost(w string) (netip.Prefix, error) {
	if addr, bits, ok := strings.Cut(w, "/"); ok {
		a, err := netip.ParseAddr(addr)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("an IP address was expected, got %q", w)
		}
		n, err := strconv.Atoi(bits)
		if err != nil {
			m, merr := netip.ParseAddr(bits)
			if merr != nil || !m.Is4() || !a.Is4() {
				return netip.Prefix{}, fmt.Errorf("bad network mask in %q", w)
			}
			n = maskBits(m.As4())
			if n < 0 {
				return netip.Prefix{}, fmt.Errorf("bad network mask in %q", w)
			}
		}
		p, err := a.Unmap().Prefix(n)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("bad network %q: %w", w, err)
		}
		return p, nil
	}
	if a, err := netip.ParseAddr(w); err == nil {
		return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
	}
	if p, ok := partialIPv4(w); ok {
		return p, nil
	}
	return netip.Prefix{}, nil
}

// partialIPv4 reads "10", "10.1", "10.1.2" (and with a trailing dot) as
// the network of those leading octets.
func partialIPv4(w string) (netip.Prefix, bool) {
	w = strings.TrimSuffix(w, ".")
	parts := strings.Split(w, ".")
	if len(parts) == 0 || len(parts) > 3 {
		return netip.Prefix{}, false
	}
	var b [4]byte
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 255 || p == "" {
			return netip.Prefix{}, false
		}
		b[i] = byte(n)
	}
	return netip.PrefixFrom(netip.AddrFrom4(b), 8*len(parts)), true
}

func maskBits(m [4]byte) int {
	v := uint32(m[0])<<24 | uint32(m[1])<<16 | uint32(m[2])<<8 | uint32(m[3])
	n := 0
	for v&0x80000000 != 0 {
		n++
		v <<= 1
	}
	if v != 0 {
		return -1
	}
	return n
}

// find reports whether a rule of list matches the client for method m.
func find(list []hostRule, m methodSet, client netip.Addr, env envSet) bool {
	for i := range list {
		r := &list[i]
		if r.limited&m == 0 {
			continue
		}
		switch {
		case r.all:
			return true
		case r.env != "":
			if name, neg := strings.CutPrefix(r.env, "!"); neg {
				if !env.has(name) {
					return true
				}
			} else if env.has(r.env) {
				return true
			}
		default:
			for _, p := range r.nets {
				if p.Contains(client) {
					return true
				}
			}
		}
	}
	return false
}

// allowed evaluates the rules as mod_access_compat does.
func (a *accessConf) allowed(m methodSet, client netip.Addr, env envSet) bool {
	i := bitIndex(m)
	switch a.order[i] {
	case orderAllowDeny:
		return find(a.allows, m, client, env) && !find(a.denys, m, client, env)
	case orderMutual:
		return find(a.allows, m, client, env) && !find(a.denys, m, client, env)
	default:
		return !find(a.denys, m, client, env) || find(a.allows, m, client, env)
	}
}

func bitIndex(m methodSet) int {
	for i := 0; i < 16; i++ {
		if m&(1<<i) != 0 {
			return i
		}
	}
	return 15
}

// envSet answers whether a variable is set in the request's environment.
type envSet interface{ has(name string) bool }
