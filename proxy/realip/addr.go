package realip

import (
	"bytes"
	"net/netip"
)

// ParseHop reads one hop of a forwarding header: an IPv4 or IPv6
// address, optionally with a port ("192.0.2.1:8080", "[2001:db8::1]:443",
// as Azure and some balancers write them) or in brackets. IPv4-mapped
// IPv6 addresses come back as IPv4. Zones, names and anything else are
// not addresses ("unknown", Squid's, included). It does not allocate,
// which netip.ParseAddr on a []byte does.
func ParseHop(b []byte) (netip.Addr, bool) {
	if len(b) == 0 {
		return netip.Addr{}, false
	}
	if b[0] == '[' {
		end := bytes.IndexByte(b, ']')
		if end < 0 || !isPort(b[end+1:], true) {
			return netip.Addr{}, false
		}
		a, ok := parseIPv6(b[1:end])
		return a.Unmap(), ok
	}
	switch bytes.Count(b, []byte{':'}) {
	case 0:
		return parseIPv4(b)
	case 1:
		i := bytes.IndexByte(b, ':')
		if !isPort(b[i:], false) {
			return netip.Addr{}, false
		}
		return parseIPv4(b[:i])
	}
	a, ok := parseIPv6(b)
	return a.Unmap(), ok
}

// isPort reports whether b is ":digits" (or empty, when optional).
func isPort(b []byte, optional bool) bool {
	if len(b) == 0 {
		return optional
	}
	if b[0] != ':' || len(b) < 2 || len(b) > 6 {
		return false
	}
	for _, c := range b[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseIPv4 reads four decimal octets without leading zeros, as
// netip.ParseAddr does.
func parseIPv4(b []byte) (netip.Addr, bool) {
	var ip [4]byte
	field, val, digits := 0, 0, 0
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if digits == 1 && val == 0 {
				return netip.Addr{}, false // leading zero
			}
			val, digits = val*10+int(c-'0'), digits+1
			if val > 255 {
				return netip.Addr{}, false
			}
		case c == '.' && digits > 0 && field < 3 && i < len(b)-1:
			ip[field] = byte(val)
			field, val, digits = field+1, 0, 0
		default:
			return netip.Addr{}, false
		}
	}
	if field != 3 || digits == 0 {
		return netip.Addr{}, false
	}
	ip[3] = byte(val)
	return netip.AddrFrom4(ip), true
}

// parseIPv6 reads groups of up to four hex digits, one "::" and an
// optional trailing IPv4 part, as netip.ParseAddr does (zones aside).
func parseIPv6(b []byte) (netip.Addr, bool) {
	var ip [16]byte
	ellipsis := -1 // where "::" stands, in bytes of ip
	if len(b) >= 2 && b[0] == ':' && b[1] == ':' {
		ellipsis, b = 0, b[2:]
	}
	i := 0
	for i < 16 && len(b) > 0 {
		n, acc := hexGroup(b)
		if n == 0 {
			return netip.Addr{}, false
		}
		if n < len(b) && b[n] == '.' { // the last 32 bits as IPv4
			if ellipsis < 0 && i != 12 || i > 12 {
				return netip.Addr{}, false
			}
			a4, ok := parseIPv4(b)
			if !ok {
				return netip.Addr{}, false
			}
			v4 := a4.As4()
			copy(ip[i:], v4[:])
			i, b = i+4, nil
			break
		}
		if n > 4 {
			return netip.Addr{}, false
		}
		ip[i], ip[i+1] = byte(acc>>8), byte(acc)
		i, b = i+2, b[n:]
		if len(b) == 0 {
			break
		}
		if b[0] != ':' || len(b) == 1 {
			return netip.Addr{}, false
		}
		b = b[1:]
		if b[0] == ':' {
			if ellipsis >= 0 {
				return netip.Addr{}, false // a second "::"
			}
			ellipsis, b = i, b[1:]
		}
	}
	if len(b) != 0 {
		return netip.Addr{}, false
	}
	if i < 16 {
		if ellipsis < 0 {
			return netip.Addr{}, false
		}
		gap := 16 - i
		copy(ip[ellipsis+gap:], ip[ellipsis:i])
		clear(ip[ellipsis : ellipsis+gap])
	} else if ellipsis >= 0 {
		return netip.Addr{}, false // "::" must stand for at least one group
	}
	return netip.AddrFrom16(ip), true
}

// hexGroup reads the hex digits at the start of b: how many, and their
// value (meaningful for up to four).
func hexGroup(b []byte) (n int, acc uint32) {
	for ; n < len(b); n++ {
		c := b[n]
		switch {
		case c >= '0' && c <= '9':
			acc = acc<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			acc = acc<<4 | uint32(c-'a'+10)
		case c >= 'A' && c <= 'F':
			acc = acc<<4 | uint32(c-'A'+10)
		default:
			return n, acc
		}
	}
	return n, acc
}
