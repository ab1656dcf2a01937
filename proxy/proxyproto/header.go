package proxyproto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/netip"
	"strconv"
)

// Header is what a PROXY header says about its connection.
type Header struct {
	Version int // 1 or 2
	// Proxied: the header names the relayed client in Source and the
	// address it connected to in Dest. It is false for a v1 UNKNOWN, a v2
	// LOCAL (a balancer's own health check) and the v2 families that
	// carry no IP address (AF_UNSPEC, AF_UNIX): the connection's own
	// addresses then stand, as the spec says.
	Proxied      bool
	Source, Dest netip.AddrPort
}

var (
	// ErrIncomplete: the bytes so far are a valid start of a header.
	ErrIncomplete = errors.New("proxyproto: incomplete header")
	// ErrNoHeader: the connection does not open with a PROXY signature.
	ErrNoHeader = errors.New("proxyproto: no PROXY header")
	// ErrMalformed: a PROXY signature followed by what the spec forbids.
	ErrMalformed = errors.New("proxyproto: malformed header")
)

const (
	v1Max = 107 // the longest v1 line, CRLF included
	// v2MaxLen bounds a v2 header's address and TLV block. The spec
	// allows 64 KiB; real senders (HAProxy, AWS, GCP) send a few hundred
	// bytes at most, and the bound is memory per new connection.
	v2MaxLen = 4096
	v2Fixed  = 16
	// MaxHeader is the longest header Parse accepts.
	MaxHeader = v2Fixed + v2MaxLen
)

var (
	v1Sig = []byte("PROXY ")
	v2Sig = []byte("\r\n\r\n\x00\r\nQUIT\n")
)

// Parse reads the header at the start of b and returns it with its
// length; what follows is the relayed protocol's. It returns
// ErrIncomplete while b could still become a valid header, ErrNoHeader
// when b cannot start one, and an error wrapping ErrMalformed for a
// header the spec says to refuse.
func Parse(b []byte) (Header, int, error) {
	switch {
	case len(b) == 0:
		return Header{}, 0, ErrIncomplete
	case hasPrefix(b, v2Sig):
		return parseV2(b)
	case hasPrefix(b, v1Sig):
		return parseV1(b)
	}
	return Header{}, 0, ErrNoHeader
}

// hasPrefix reports whether b starts with sig, or is a start of it
// (ErrIncomplete is then decided by the version's parser).
func hasPrefix(b, sig []byte) bool {
	n := min(len(b), len(sig))
	return n > 0 && bytes.Equal(b[:n], sig[:n])
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// parseV1 reads "PROXY TCP4 src dst sport dport\r\n" (or TCP6, or
// UNKNOWN with anything before the CRLF), exactly as the spec spells it:
// single spaces, canonical addresses, ports without leading zeros.
func parseV1(b []byte) (Header, int, error) {
	if len(b) < len(v1Sig) {
		return Header{}, 0, ErrIncomplete
	}
	end := bytes.IndexByte(b[:min(len(b), v1Max)], '\n')
	if end < 0 {
		if len(b) >= v1Max {
			return Header{}, 0, malformed("v1 line longer than %d bytes", v1Max)
		}
		return Header{}, 0, ErrIncomplete
	}
	if end == 0 || b[end-1] != '\r' {
		return Header{}, 0, malformed("v1 line not ended by CRLF")
	}
	line, n := b[len(v1Sig):end-1], end+1
	if bytes.IndexByte(line, '\r') >= 0 {
		return Header{}, 0, malformed("stray CR in v1 line")
	}
	proto, rest, _ := bytes.Cut(line, []byte{' '})
	if string(proto) == "UNKNOWN" {
		return Header{Version: 1}, n, nil
	}
	if string(proto) != "TCP4" && string(proto) != "TCP6" {
		return Header{}, 0, malformed("v1 protocol %q", proto)
	}
	f := bytes.Split(rest, []byte{' '})
	if len(f) != 4 {
		return Header{}, 0, malformed("v1 line has %d fields after the protocol, want 4", len(f))
	}
	src, err1 := v1Addr(f[0], proto[3] == '4')
	dst, err2 := v1Addr(f[1], proto[3] == '4')
	sport, err3 := v1Port(f[2])
	dport, err4 := v1Port(f[3])
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return Header{}, 0, err
	}
	return Header{Version: 1, Proxied: true,
		Source: netip.AddrPortFrom(src, sport), Dest: netip.AddrPortFrom(dst, dport)}, n, nil
}

func v1Addr(b []byte, v4 bool) (netip.Addr, error) {
	a, err := netip.ParseAddr(string(b)) // refuses leading zeros in IPv4
	if err != nil || a.Zone() != "" || a.Is4() != v4 {
		return netip.Addr{}, malformed("v1 address %q", b)
	}
	return a.Unmap(), nil
}

func v1Port(b []byte) (uint16, error) {
	n, err := strconv.ParseUint(string(b), 10, 16)
	if err != nil || len(b) > 1 && b[0] == '0' {
		return 0, malformed("v1 port %q", b)
	}
	return uint16(n), nil
}

// v2 commands and the address lengths of its families.
const (
	cmdLocal, cmdProxy                    = 0x0, 0x1
	famUnspec, famInet, famInet6, famUnix = 0x0, 0x1, 0x2, 0x3
	tlvCRC32C                             = 0x03
)

// addrLens are the address block lengths of the v2 families.
var addrLens = [4]int{famUnspec: 0, famInet: 12, famInet6: 36, famUnix: 216}

// parseV2 reads the binary header: signature, version and command,
// family and transport, length, addresses, then TLVs, of which only the
// CRC32C checksum is checked (the spec: a receiver that supports it
// must); the others are skipped.
func parseV2(b []byte) (Header, int, error) {
	if len(b) < v2Fixed {
		return Header{}, 0, ErrIncomplete
	}
	verCmd, fam := b[12], b[13]
	length := int(binary.BigEndian.Uint16(b[14:16]))
	switch {
	case verCmd>>4 != 2:
		return Header{}, 0, malformed("v2 version %d", verCmd>>4)
	case verCmd&0xf > cmdProxy:
		return Header{}, 0, malformed("v2 command %#x", verCmd&0xf)
	case fam>>4 > famUnix || fam&0xf > 2:
		return Header{}, 0, malformed("v2 family and transport %#02x", fam)
	case length > v2MaxLen:
		return Header{}, 0, malformed("v2 header of %d bytes, at most %d taken", length, v2MaxLen)
	case len(b) < v2Fixed+length:
		return Header{}, 0, ErrIncomplete
	}
	n := v2Fixed + length
	body := b[v2Fixed:n]
	h := Header{Version: 2}
	addrLen := 0
	if fam&0xf != 0 { // with UNSPEC transport the block is only skipped
		addrLen = addrLens[fam>>4]
	}
	if len(body) < addrLen {
		return Header{}, 0, malformed("v2 address block of %d bytes, family %#02x needs %d", len(body), fam, addrLen)
	}
	if verCmd&0xf == cmdProxy && addrLen > 0 && fam>>4 != famUnix {
		h.Proxied = true
		h.Source, h.Dest = v2Addrs(body[:addrLen], fam>>4 == famInet)
	}
	if addrLen > 0 { // TLVs follow a known address block; UNSPEC's is only skipped
		if err := checkTLVs(b[:n], v2Fixed+addrLen); err != nil {
			return Header{}, 0, err
		}
	}
	return h, n, nil
}

func v2Addrs(a []byte, v4 bool) (src, dst netip.AddrPort) {
	if v4 {
		s, d := netip.AddrFrom4([4]byte(a[0:4])), netip.AddrFrom4([4]byte(a[4:8]))
		return netip.AddrPortFrom(s, binary.BigEndian.Uint16(a[8:])), netip.AddrPortFrom(d, binary.BigEndian.Uint16(a[10:]))
	}
	s, d := netip.AddrFrom16([16]byte(a[0:16])).Unmap(), netip.AddrFrom16([16]byte(a[16:32])).Unmap()
	return netip.AddrPortFrom(s, binary.BigEndian.Uint16(a[32:])), netip.AddrPortFrom(d, binary.BigEndian.Uint16(a[34:]))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkTLVs walks the TLVs of hdr from off: each must fit, and a CRC32C
// one must match the header's checksum taken with its value zeroed.
func checkTLVs(hdr []byte, off int) error {
	for off < len(hdr) {
		if len(hdr)-off < 3 {
			return malformed("v2 TLV cut short")
		}
		typ, l := hdr[off], int(binary.BigEndian.Uint16(hdr[off+1:off+3]))
		val := off + 3
		if len(hdr)-val < l {
			return malformed("v2 TLV %#02x of %d bytes overruns the header", typ, l)
		}
		if typ == tlvCRC32C {
			if l != 4 {
				return malformed("v2 CRC32C TLV of %d bytes", l)
			}
			sum := crc32.Update(0, castagnoli, hdr[:val])
			sum = crc32.Update(sum, castagnoli, []byte{0, 0, 0, 0})
			sum = crc32.Update(sum, castagnoli, hdr[val+4:])
			if sum != binary.BigEndian.Uint32(hdr[val:val+4]) {
				return malformed("v2 CRC32C mismatch")
			}
		}
		off = val + l
	}
	return nil
}
