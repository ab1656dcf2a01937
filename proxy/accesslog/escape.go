package accesslog

import (
	"net"
	"net/netip"
	"strconv"
	"time"
	"unicode/utf8"
)

const hexUpper = "0123456789ABCDEF"

// mustEscape holds the bytes nginx writes as \xHH in a log line
// (ngx_http_log_escape): control characters, '"', '\', DEL and every
// byte from 0x80. A client cannot end a line or a quoted field early.
var mustEscape = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x7f
	}
	return t
}()

// appendEscaped appends v as nginx escapes a variable's value, copying
// the runs between escaped bytes whole.
func appendEscaped(dst, v []byte) []byte {
	start := 0
	for i, c := range v {
		if !mustEscape[c] {
			continue
		}
		dst = append(dst, v[start:i]...)
		dst = append(dst, '\\', 'x', hexUpper[c>>4], hexUpper[c&0xf])
		start = i + 1
	}
	return append(dst, v[start:]...)
}

// appendQuotedOrDash appends "v", or - when v is empty (nginx writes an
// absent header field as "-").
func appendQuotedOrDash(dst, v []byte) []byte {
	if len(v) == 0 {
		return append(dst, `"-"`...)
	}
	dst = append(dst, '"')
	dst = appendEscaped(dst, v)
	return append(dst, '"')
}

// appendAddr appends ip as text (IPv4 in dotted form, also when it came
// as an IPv4-mapped IPv6 address), or - when there is none.
func appendAddr(dst []byte, ip net.IP) []byte {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return append(dst, '-')
	}
	return a.Unmap().AppendTo(dst)
}

// appendSeconds appends d in seconds with microseconds: "0.000042".
func appendSeconds(dst []byte, d time.Duration) []byte {
	us := max(d.Microseconds(), 0)
	dst = strconv.AppendInt(dst, us/1e6, 10)
	dst = append(dst, '.')
	frac := us % 1e6
	for div := int64(1e5); div > 0; div /= 10 {
		dst = append(dst, byte('0'+frac/div%10))
	}
	return dst
}

// appendJSONString appends v as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, so that
// every line parses whatever a client sent.
func appendJSONString(dst, v []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
			i++
		case c < 0x20 || c == 0x7f:
			dst = append(dst, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xf])
			i++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(v[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, v[i:i+n]...)
			}
			i += n
		}
	}
	return append(dst, '"')
}
