package proxyproto

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"net/netip"
	"strings"
	"testing"
)

// v2 builds a version 2 header: command, family byte, body (addresses
// and TLVs).
func v2(cmd, fam byte, body []byte) []byte {
	b := append([]byte{}, v2Sig...)
	b = append(b, 0x20|cmd, fam)
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

func inet4Body(src, dst string, sport, dport uint16) []byte {
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	b := append(s[:], d[:]...)
	b = binary.BigEndian.AppendUint16(b, sport)
	return binary.BigEndian.AppendUint16(b, dport)
}

func inet6Body(src, dst string, sport, dport uint16) []byte {
	s, d := netip.MustParseAddr(src).As16(), netip.MustParseAddr(dst).As16()
	b := append(s[:], d[:]...)
	b = binary.BigEndian.AppendUint16(b, sport)
	return binary.BigEndian.AppendUint16(b, dport)
}

// withCRC appends a CRC32C TLV holding the header's checksum (wrong
// when corrupt).
func withCRC(cmd, fam byte, body []byte, corrupt bool) []byte {
	body = append(append([]byte{}, body...), tlvCRC32C, 0, 4, 0, 0, 0, 0)
	h := v2(cmd, fam, body)
	sum := crc32.Checksum(h, castagnoli)
	if corrupt {
		sum++
	}
	binary.BigEndian.PutUint32(h[len(h)-4:], sum)
	return h
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func TestParseReadsEveryFormTheSpecAllows(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want Header
	}{
		{"v1 TCP4", []byte("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET /"),
			Header{Version: 1, Proxied: true, Source: ap("192.0.2.1:56324"), Dest: ap("198.51.100.2:443")}},
		{"v1 TCP6", []byte("PROXY TCP6 2001:db8::1 2001:db8::2 1 65535\r\n"),
			Header{Version: 1, Proxied: true, Source: ap("[2001:db8::1]:1"), Dest: ap("[2001:db8::2]:65535")}},
		{"v1 TCP6 with mapped IPv4 reads as IPv4", []byte("PROXY TCP6 ::ffff:192.0.2.1 ::1 0 80\r\n"),
			Header{Version: 1, Proxied: true, Source: ap("192.0.2.1:0"), Dest: ap("[::1]:80")}},
		{"v1 UNKNOWN keeps the socket's addresses", []byte("PROXY UNKNOWN\r\n"), Header{Version: 1}},
		{"v1 UNKNOWN ignores the rest of its line", []byte("PROXY UNKNOWN ffff::1 ffff::2 65535 65535\r\n"), Header{Version: 1}},
		{"v2 PROXY TCP4", v2(cmdProxy, 0x11, inet4Body("192.0.2.1", "198.51.100.2", 56324, 443)),
			Header{Version: 2, Proxied: true, Source: ap("192.0.2.1:56324"), Dest: ap("198.51.100.2:443")}},
		{"v2 PROXY TCP6", v2(cmdProxy, 0x21, inet6Body("2001:db8::1", "2001:db8::2", 1, 2)),
			Header{Version: 2, Proxied: true, Source: ap("[2001:db8::1]:1"), Dest: ap("[2001:db8::2]:2")}},
		{"v2 PROXY UDP4", v2(cmdProxy, 0x12, inet4Body("192.0.2.1", "192.0.2.2", 1, 2)),
			Header{Version: 2, Proxied: true, Source: ap("192.0.2.1:1"), Dest: ap("192.0.2.2:2")}},
		{"v2 LOCAL health check keeps the socket's addresses", v2(cmdLocal, 0x00, nil), Header{Version: 2}},
		{"v2 LOCAL with addresses still keeps the socket's", v2(cmdLocal, 0x11, inet4Body("192.0.2.1", "192.0.2.2", 1, 2)), Header{Version: 2}},
		{"v2 AF_UNSPEC keeps the socket's addresses", v2(cmdProxy, 0x00, []byte{1, 2, 3}), Header{Version: 2}},
		{"v2 AF_UNIX falls back to the socket's addresses", v2(cmdProxy, 0x31, make([]byte, 216)), Header{Version: 2}},
		{"v2 TLVs are skipped", v2(cmdProxy, 0x11, append(inet4Body("192.0.2.1", "192.0.2.2", 1, 2), 0x04, 0, 2, 'h', 'i', 0x01, 0, 0)),
			Header{Version: 2, Proxied: true, Source: ap("192.0.2.1:1"), Dest: ap("192.0.2.2:2")}},
		{"v2 with a matching CRC32C", withCRC(cmdProxy, 0x11, inet4Body("192.0.2.1", "192.0.2.2", 1, 2), false),
			Header{Version: 2, Proxied: true, Source: ap("192.0.2.1:1"), Dest: ap("192.0.2.2:2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, n, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if h != tt.want {
				t.Errorf("header %+v, want %+v", h, tt.want)
			}
			rest := string(tt.in[n:])
			if tt.name == "v1 TCP4" && rest != "GET /" || tt.name != "v1 TCP4" && rest != "" {
				t.Errorf("left %q after the header", rest)
			}
		})
	}
}

func TestParseRefusesWhatTheSpecForbids(t *testing.T) {
	long := "PROXY UNKNOWN " + strings.Repeat("x", 100) + "\r\n"
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"plain HTTP", []byte("GET / HTTP/1.1\r\n"), ErrNoHeader},
		{"TLS ClientHello", []byte{0x16, 0x03, 0x01, 0x02, 0x00}, ErrNoHeader},
		{"v1 lower case", []byte("proxy TCP4 1.2.3.4 1.2.3.4 1 2\r\n"), ErrNoHeader},
		{"v1 LF alone", []byte("PROXY TCP4 1.2.3.4 1.2.3.4 1 2\n"), ErrMalformed},
		{"v1 CR inside", []byte("PROXY TCP4 1.2.3.4\r 1.2.3.4 1 2\r\n"), ErrMalformed},
		{"v1 longer than 107 bytes", []byte(long), ErrMalformed},
		{"v1 no CRLF in 107 bytes", []byte("PROXY UNKNOWN " + strings.Repeat("x", 200)), ErrMalformed},
		{"v1 unknown protocol", []byte("PROXY UDP4 1.2.3.4 1.2.3.4 1 2\r\n"), ErrMalformed},
		{"v1 two spaces", []byte("PROXY TCP4 1.2.3.4  1.2.3.4 1 2\r\n"), ErrMalformed},
		{"v1 missing port", []byte("PROXY TCP4 1.2.3.4 1.2.3.4 1\r\n"), ErrMalformed},
		{"v1 leading zero in address", []byte("PROXY TCP4 1.2.3.04 1.2.3.4 1 2\r\n"), ErrMalformed},
		{"v1 leading zero in port", []byte("PROXY TCP4 1.2.3.4 1.2.3.4 01 2\r\n"), ErrMalformed},
		{"v1 port too large", []byte("PROXY TCP4 1.2.3.4 1.2.3.4 65536 2\r\n"), ErrMalformed},
		{"v1 IPv6 address under TCP4", []byte("PROXY TCP4 ::1 1.2.3.4 1 2\r\n"), ErrMalformed},
		{"v1 IPv4 address under TCP6", []byte("PROXY TCP6 1.2.3.4 ::1 1 2\r\n"), ErrMalformed},
		{"v1 zone", []byte("PROXY TCP6 fe80::1%eth0 ::1 1 2\r\n"), ErrMalformed},
		{"v1 host name", []byte("PROXY TCP4 localhost 1.2.3.4 1 2\r\n"), ErrMalformed},
		{"v2 version 1", append(append([]byte{}, v2Sig...), 0x11, 0x11, 0, 0), ErrMalformed},
		{"v2 command 2", v2(0x2, 0x11, inet4Body("1.2.3.4", "1.2.3.4", 1, 2)), ErrMalformed},
		{"v2 family 4", v2(cmdProxy, 0x41, make([]byte, 12)), ErrMalformed},
		{"v2 transport 3", v2(cmdProxy, 0x13, make([]byte, 12)), ErrMalformed},
		{"v2 address block too short", v2(cmdProxy, 0x21, make([]byte, 12)), ErrMalformed},
		{"v2 longer than taken", v2(cmdProxy, 0x00, make([]byte, v2MaxLen+1)), ErrMalformed},
		{"v2 TLV overruns", v2(cmdProxy, 0x11, append(inet4Body("1.2.3.4", "1.2.3.4", 1, 2), 0x04, 0, 9, 1)), ErrMalformed},
		{"v2 TLV cut short", v2(cmdProxy, 0x11, append(inet4Body("1.2.3.4", "1.2.3.4", 1, 2), 0x04, 0)), ErrMalformed},
		{"v2 wrong CRC32C", withCRC(cmdProxy, 0x11, inet4Body("1.2.3.4", "1.2.3.4", 1, 2), true), ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := Parse(tt.in); !errors.Is(err, tt.want) {
				t.Errorf("Parse: %v, want %v", err, tt.want)
			}
		})
	}
}

// TestParseWaitsForTheWholeHeader: every proper prefix of a valid header
// is incomplete, never an answer and never a refusal.
func TestParseWaitsForTheWholeHeader(t *testing.T) {
	for _, in := range [][]byte{
		[]byte("PROXY TCP6 2001:db8::1 2001:db8::2 56324 443\r\n"),
		v2(cmdProxy, 0x21, append(inet6Body("2001:db8::1", "2001:db8::2", 1, 2), 0x04, 0, 1, 0)),
	} {
		for i := range len(in) {
			if _, _, err := Parse(in[:i]); !errors.Is(err, ErrIncomplete) {
				t.Fatalf("Parse(%q): %v, want ErrIncomplete", in[:i], err)
			}
		}
	}
}
