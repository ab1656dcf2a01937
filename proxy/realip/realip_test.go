package realip

import (
	"net/netip"
	"strings"
	"testing"
)

func config(from ...string) *Config {
	c := &Config{}
	for _, f := range from {
		c.From = append(c.From, netip.MustParsePrefix(f))
	}
	return c
}

// lines splits "a, b | c" into header lines "a, b" and "c".
func lines(s string) [][]byte {
	if s == "" {
		return nil
	}
	var out [][]byte
	for _, l := range strings.Split(s, "|") {
		out = append(out, []byte(l))
	}
	return out
}

// TestResolveFindsTheClientAsNginxRealIPRecursiveDoes: the cases of
// set_real_ip_from + real_ip_recursive on.
func TestResolveFindsTheClientAsNginxRealIPRecursiveDoes(t *testing.T) {
	trusted := config("127.0.0.1/32", "10.0.0.0/8", "2001:db8:f::/48")
	tests := []struct {
		name, peer, header string
		want               string
		named              bool
		claimed            string // the hops forwarded before the client
	}{
		{"untrusted peer: its header is ignored", "192.0.2.9", "203.0.113.5", "192.0.2.9", false, "203.0.113.5"},
		{"untrusted peer without a header", "192.0.2.9", "", "192.0.2.9", false, ""},
		{"trusted peer without a header is the client", "127.0.0.1", "", "127.0.0.1", false, ""},
		{"trusted peer names the client", "127.0.0.1", "203.0.113.5", "203.0.113.5", true, ""},
		{"a spoofed hop left of the client stays a claim", "127.0.0.1", "127.0.0.9, 203.0.113.5", "203.0.113.5", true, "127.0.0.9"},
		{"trusted hops are walked past", "127.0.0.1", "198.51.100.1, 203.0.113.5, 10.1.2.3, 10.9.9.9", "203.0.113.5", true, "198.51.100.1"},
		{"every hop trusted: the leftmost", "127.0.0.1", "10.0.0.7, 10.0.0.8", "10.0.0.7", true, ""},
		{"several header lines are one chain", "127.0.0.1", "6.6.6.6, 7.7.7.7|203.0.113.5", "203.0.113.5", true, "6.6.6.6, 7.7.7.7"},
		{"the walk crosses lines", "127.0.0.1", "203.0.113.5|10.0.0.1", "203.0.113.5", true, ""},
		{"empty hops and spaces are nothing", "127.0.0.1", " , 198.51.100.1,,\t203.0.113.5 , ", "203.0.113.5", true, "198.51.100.1"},
		{"a garbage rightmost hop: the peer stands", "127.0.0.1", "203.0.113.5, unknown", "127.0.0.1", false, "203.0.113.5, unknown"},
		{"garbage behind a trusted hop: that hop stands", "127.0.0.1", "unknown, 10.0.0.5", "10.0.0.5", true, "unknown"},
		{"ports and brackets", "127.0.0.1", "[2001:db8::5]:443, 10.0.0.1:8080", "2001:db8::5", true, ""},
		{"IPv6 peer and hops", "2001:db8:f::1", "2001:db8::5, 2001:db8:f::2", "2001:db8::5", true, ""},
		{"an IPv4-mapped peer is IPv4", "::ffff:127.0.0.1", "203.0.113.5", "203.0.113.5", true, ""},
		{"an IPv4-mapped hop is IPv4", "127.0.0.1", "::ffff:10.0.0.2", "10.0.0.2", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := lines(tt.header)
			got := trusted.Resolve(netip.MustParseAddr(tt.peer), ls)
			if got.Addr != netip.MustParseAddr(tt.want) || got.Named != tt.named {
				t.Errorf("client %v (named %v), want %s (named %v)", got.Addr, got.Named, tt.want, tt.named)
			}
			if c := string(AppendClaimed(nil, ls, got.Claimed)); c != tt.claimed {
				t.Errorf("claimed %q, want %q", c, tt.claimed)
			}
		})
	}
}

func TestResolveTrustsNobodyWithoutFrom(t *testing.T) {
	got := config().Resolve(netip.MustParseAddr("127.0.0.1"), lines("203.0.113.5"))
	if got.Addr != netip.MustParseAddr("127.0.0.1") || got.Named || got.Claimed != 1 {
		t.Errorf("got %+v, want the peer with its header as a claim", got)
	}
}

func TestParseHopReadsAddressesOnly(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" = not an address
	}{
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.1:8080", "192.0.2.1"},
		{"2001:db8::1", "2001:db8::1"},
		{"[2001:db8::1]", "2001:db8::1"},
		{"[2001:db8::1]:443", "2001:db8::1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"::", "::"},
		{"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"},
		{"unknown", ""},
		{"_hidden", ""},
		{"192.0.2.01", ""},
		{"192.0.2.256", ""},
		{"192.0.2", ""},
		{"192.0.2.1:", ""},
		{"192.0.2.1:http", ""},
		{"[192.0.2.1]", ""},
		{"fe80::1%eth0", ""},
		{"[2001:db8::1", ""},
		{"2001:db8::1:443x", ""},
		{"1::2::3", ""},
		{"example.com", ""},
	}
	for _, tt := range tests {
		a, ok := ParseHop([]byte(tt.in))
		switch {
		case tt.want == "" && ok:
			t.Errorf("ParseHop(%q) = %v, want not an address", tt.in, a)
		case tt.want != "" && (!ok || a != netip.MustParseAddr(tt.want)):
			t.Errorf("ParseHop(%q) = %v, %v; want %s", tt.in, a, ok, tt.want)
		}
	}
}

func TestResolveDoesNotAllocate(t *testing.T) {
	c := config("127.0.0.1/32", "10.0.0.0/8")
	ls := lines("198.51.100.1, 2001:db8::5, 10.1.2.3|10.9.9.9")
	peer := netip.MustParseAddr("127.0.0.1")
	if n := testing.AllocsPerRun(100, func() { c.Resolve(peer, ls) }); n != 0 {
		t.Errorf("Resolve allocates %v times, want 0", n)
	}
}
