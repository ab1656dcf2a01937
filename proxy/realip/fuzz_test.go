package realip

import (
	"bytes"
	"net/netip"
	"testing"
)

// FuzzParseHop: a bare address parses exactly as netip.ParseAddr reads
// it (zones aside, which no forwarding header carries).
func FuzzParseHop(f *testing.F) {
	for _, s := range []string{"192.0.2.1", "0.0.0.0", "2001:db8::1", "::", "::ffff:1.2.3.4", "1:2:3:4:5:6:7:8",
		"1::", "::1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "01.2.3.4", "1::2::3", "[::1]:80", "1.2.3.4:80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := ParseHop(b)
		if bytes.ContainsAny(b, "[]%") || bytes.Count(b, []byte{':'}) == 1 {
			return // brackets and ports are ours; zones netip's alone
		}
		want, err := netip.ParseAddr(string(b))
		if ok != (err == nil) || ok && got != want.Unmap() {
			t.Fatalf("ParseHop(%q) = %v, %v; netip: %v, %v", b, got, ok, want, err)
		}
	})
}

// FuzzResolve: whatever the header, the client is the peer or one of
// the header's addresses, a trusted peer's untrusted client is never a
// trusted address unless every hop was, and the claimed hops plus the
// client never grow the chain.
func FuzzResolve(f *testing.F) {
	f.Add([]byte("198.51.100.1, 203.0.113.5, 10.1.2.3"), true)
	f.Add([]byte("unknown, 10.0.0.5"), true)
	f.Add([]byte(" , ,"), false)
	c := config("127.0.0.1/32", "10.0.0.0/8")
	f.Fuzz(func(t *testing.T, header []byte, trustedPeer bool) {
		peer := netip.MustParseAddr("192.0.2.9")
		if trustedPeer {
			peer = netip.MustParseAddr("127.0.0.1")
		}
		ls := bytes.Split(header, []byte{'|'})
		got := c.Resolve(peer, ls)
		if !got.Named && got.Addr != peer {
			t.Fatalf("client %v neither named nor the peer", got.Addr)
		}
		if got.Named && !trustedPeer {
			t.Fatalf("an untrusted peer named %v", got.Addr)
		}
		total := countHops(ls)
		if got.Claimed < 0 || got.Claimed > total {
			t.Fatalf("claimed %d of %d hops", got.Claimed, total)
		}
		claimed := AppendClaimed(nil, ls, got.Claimed)
		if countHops([][]byte{claimed}) != got.Claimed {
			t.Fatalf("claimed %q is not %d hops", claimed, got.Claimed)
		}
	})
}
