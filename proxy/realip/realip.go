package realip

import (
	"bytes"
	"math"
	"net/netip"
)

// DefaultHeader is the header a trusted proxy names its client in.
const DefaultHeader = "X-Forwarded-For"

// Config is who may name the client, and where.
type Config struct {
	// From are the trusted proxies' networks; empty trusts nobody, and
	// every client is its connecting address.
	From []netip.Prefix
	// Header holds the hops, comma-separated, the client leftmost ("" =
	// X-Forwarded-For). A header of one address (X-Real-IP,
	// CF-Connecting-IP) is a chain of one.
	Header string
}

// HeaderName is the configured header, or DefaultHeader.
func (c *Config) HeaderName() string {
	if c.Header == "" {
		return DefaultHeader
	}
	return c.Header
}

// Trusts reports whether a is a trusted proxy's address.
func (c *Config) Trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range c.From {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Client is what Resolve found.
type Client struct {
	Addr netip.Addr
	// Named: Addr came from the header, named by a trusted proxy; false
	// when it is the connecting peer's own.
	Named bool
	// Claimed is how many hops, from the left, are not vouched for: what
	// the client (or proxies nobody trusts) put there. They travel on as
	// they came, before the client's own address (AppendClaimed).
	Claimed int
}

// Resolve finds the client of a request from peer carrying the header
// lines (each line's hops comma-separated, the rightmost last). As
// nginx does, a hop that is not an address ends the walk, and the
// address before it stands; when every hop is trusted, the leftmost is
// the client. It does not allocate.
func (c *Config) Resolve(peer netip.Addr, lines [][]byte) Client {
	peer = peer.Unmap()
	total := countHops(lines)
	if total == 0 || !c.Trusts(peer) {
		return Client{Addr: peer, Claimed: total}
	}
	cl := Client{Addr: peer, Claimed: total}
	it := hops{lines: lines, line: len(lines)}
	for {
		hop, ok := it.prev()
		if !ok {
			return cl
		}
		a, ok := ParseHop(hop)
		if !ok {
			return cl
		}
		cl.Addr, cl.Named, cl.Claimed = a, true, cl.Claimed-1
		if !c.Trusts(a) {
			return cl
		}
	}
}

// AppendClaimed appends the first n hops of lines (every one when n is
// negative) to dst, ", " between them, as they came.
func AppendClaimed(dst []byte, lines [][]byte, n int) []byte {
	if n < 0 {
		n = math.MaxInt
	}
	i := 0
	for _, line := range lines {
		for hop := []byte(nil); i < n; i++ {
			if hop, line = nextHop(line); hop == nil {
				break
			}
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(dst, hop...)
		}
	}
	return dst
}

// countHops counts the hops of lines; empty ones ("a,,b") are none.
func countHops(lines [][]byte) int {
	n := 0
	for _, line := range lines {
		for hop := []byte(nil); ; n++ {
			if hop, line = nextHop(line); hop == nil {
				break
			}
		}
	}
	return n
}

// nextHop cuts the first hop off line, trimmed; nil when none is left.
func nextHop(line []byte) (hop, rest []byte) {
	for len(line) > 0 {
		hop, line, _ = bytes.Cut(line, []byte{','})
		if hop = trim(hop); len(hop) > 0 {
			return hop, line
		}
	}
	return nil, nil
}

// hops walks the hops of lines from the rightmost back.
type hops struct {
	lines [][]byte
	line  int    // lines[line] is being walked (len(lines): none yet)
	rest  []byte // what is left of it, to the left
}

func (h *hops) prev() ([]byte, bool) {
	for {
		for len(h.rest) > 0 {
			var hop []byte
			if i := bytes.LastIndexByte(h.rest, ','); i >= 0 {
				hop, h.rest = h.rest[i+1:], h.rest[:i]
			} else {
				hop, h.rest = h.rest, nil
			}
			if hop = trim(hop); len(hop) > 0 {
				return hop, true
			}
		}
		if h.line == 0 {
			return nil, false
		}
		h.line--
		h.rest = h.lines[h.line]
	}
}

func trim(b []byte) []byte { return bytes.Trim(b, " \t") }
