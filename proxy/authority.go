package proxy

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/valyala/fasthttp"
)

// The authority a request is for decides its site, its cache key, its
// purge scope and the Host the origin gets: all four must read the same
// bytes, or a client can have one site's answer stored under another's
// URL, or slip past a site's rules by spelling its name otherwise
// ("A.TEST.", "a.test:80"). settleTarget, the first thing admit does,
// makes the request say its authority once, in one spelling, for every
// protocol: the Host field holds it (an absolute-form target's authority
// replaces the Host field, RFC 9112 3.2.2; HTTP/2 and HTTP/3 put
// :authority there), normalised as nginx normalises $host (lower case,
// one trailing dot removed) and without the scheme's default port, and
// the target is origin-form. What RFC 9110 4.2.3 and 7.2 do not allow
// in a Host (userinfo, an empty or malformed name or port) is refused.

// ErrBadRequest is returned for a request whose target or Host ramjet
// cannot route: it is answered 400 and its connection closed.
var ErrBadRequest = errors.New("proxy: bad request")

// maxHost is the longest host (with its port) ramjet routes: a DNS name
// has at most 253 bytes, and ":65535" and an IPv6 literal's brackets fit.
const maxHost = 270

// settleTarget makes req's Host field its authority, normalised, and its
// target origin-form (or "*" for OPTIONS). tls is the connection's
// scheme, whose default port a Host leaves out. It changes req only when
// the request said either otherwise.
func settleTarget(req *fasthttp.Request, tls bool) error {
	h := &req.Header
	target, host := h.RequestURI(), h.Host()
	rest, absolute := target, false
	switch {
	case len(target) > 0 && target[0] == '/':
	case string(target) == "*" && h.IsOptions():
	default:
		var auth []byte
		var ok bool
		if auth, rest, tls, ok = splitAbsolute(target); !ok {
			return fmt.Errorf("%w: request target %.100q is neither origin nor absolute form", ErrBadRequest, target)
		}
		host, absolute = auth, true
	}
	if !absolute && isNormalHost(host, tls) {
		pinURI(req) // the common case, on every hit: nothing to rewrite
		return nil
	}
	var buf [maxHost]byte
	norm, err := appendHost(buf[:0], host, tls)
	if err != nil {
		if len(host) == 0 && !absolute && !h.IsHTTP11() {
			return nil // HTTP/1.0 without a Host: the default site, as nginx serves it
		}
		return fmt.Errorf("%w: host %.100q: %w", ErrBadRequest, host, err)
	}
	if absolute {
		if len(rest) == 0 || rest[0] != '/' { // "http://a.test" or "http://a.test?q"
			rest = append([]byte{'/'}, rest...)
		}
		h.SetHostBytes(norm)
		req.SetRequestURIBytes(rest) // after the host: rest may alias the old target
	} else if !bytes.Equal(norm, host) {
		h.SetHostBytes(norm)
		req.SetRequestURIBytes(target) // the parsed URI, if any, read the old Host
	}
	pinURI(req)
	return nil
}

// isNormalHost reports whether host is already as appendHost would
// write it: a lower-case name of non-empty labels (no trailing dot), and
// a port, if any, without leading zeros that is not the scheme's default.
// IP literals and anything else take appendHost's way.
func isNormalHost[H string | []byte](host H, tls bool) bool {
	if len(host) == 0 || len(host) > maxHost {
		return false
	}
	i := 0 // the name's end
	for ; i < len(host) && host[i] != ':'; i++ {
		switch c := host[i]; {
		case c == '.':
			if i == 0 || host[i-1] == '.' {
				return false // an empty label
			}
		case !normalNameByte[c]:
			return false
		}
	}
	if i == 0 || host[i-1] == '.' {
		return false
	}
	if i == len(host) {
		return true
	}
	port := host[i+1:]
	if len(port) == 0 || len(port) > 5 || port[0] == '0' {
		return false
	}
	n := 0
	for j := range len(port) {
		if c := port[j]; c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(port[j]-'0')
	}
	return n <= 65535 && !(n == 80 && !tls || n == 443 && tls)
}

// normalNameByte are the bytes but '.' of a name in its normal spelling:
// appendName's, lower case (a table: isNormalHost reads it on every
// request).
var normalNameByte = func() (t [256]bool) {
	for _, c := range []byte("-_~0123456789abcdefghijklmnopqrstuvwxyz") {
		t[c] = true
	}
	return t
}()

// normalHost is host (a purge command's, the admin API's) read as a
// request's Host is: "A.TEST.:80" is "a.test". One that is no host stays
// as it is, and matches no site's.
func normalHost(host string) string {
	if isNormalHost(host, false) {
		return host // as requests' are (an ESI include's page host, each time): no copy
	}
	var buf [maxHost]byte
	if norm, err := appendHost(buf[:0], []byte(host), false); err == nil {
		return string(norm)
	}
	return host
}

// splitAbsolute splits an absolute-form http or https target (scheme in
// any case) into its authority and the rest ("/path?query", "?query" or
// nothing), and reports whether the scheme is https.
func splitAbsolute(target []byte) (auth, rest []byte, https, ok bool) {
	scheme, after, found := bytes.Cut(target, []byte("://"))
	switch {
	case !found:
		return nil, nil, false, false
	case bytes.EqualFold(scheme, []byte("http")):
	case bytes.EqualFold(scheme, []byte("https")):
		https = true
	default:
		return nil, nil, false, false
	}
	end := len(after)
	if i := bytes.IndexAny(after, "/?#"); i >= 0 {
		end = i
	}
	return after[:end], after[end:], https, true
}

// appendHost appends host as ramjet routes, keys and forwards it: lower
// case, one trailing dot of a name removed, the port without leading
// zeros and left out when it is the scheme's default. A name is letters,
// digits, "-", ".", "_" and "~" (what Apache httpd takes; RFC 3986 also
// allows sub-delims and percent-encoding, which no DNS name has), an IP
// literal hex digits, ":" and "." in brackets.
func appendHost(dst, host []byte, tls bool) ([]byte, error) {
	if len(host) == 0 {
		return dst, errors.New("empty")
	}
	if len(host) > maxHost {
		return dst, errors.New("too long")
	}
	name, port, err := splitHostPort(host)
	switch {
	case err != nil:
		return dst, err
	case len(name) == 0:
		return dst, errors.New("empty name")
	case name[0] == '[':
		dst, err = appendIPLiteral(dst, name)
	default:
		dst, err = appendName(dst, name)
	}
	if err != nil {
		return dst, err
	}
	return appendPort(dst, port, tls)
}

// splitHostPort splits host into its name (an IP literal with its
// brackets) and its port, nil when it has none.
func splitHostPort(host []byte) (name, port []byte, err error) {
	if host[0] == '[' {
		end := bytes.IndexByte(host, ']')
		switch {
		case end < 0:
			return nil, nil, errors.New("unclosed IP literal")
		case end == len(host)-1:
			return host, nil, nil
		case host[end+1] != ':':
			return nil, nil, errors.New("junk after the IP literal")
		}
		return host[:end+1], host[end+2:], nil
	}
	if i := bytes.IndexByte(host, ':'); i >= 0 {
		return host[:i], host[i+1:], nil
	}
	return host, nil, nil
}

// appendName appends a host name (or IPv4 address) lower case, without
// one trailing dot; userinfo, empty labels and other bytes are refused.
func appendName(dst, name []byte) ([]byte, error) {
	if bytes.IndexByte(name, '@') >= 0 {
		return dst, errors.New("userinfo is not allowed")
	}
	if n := len(name); n > 0 && name[n-1] == '.' {
		name = name[:n-1] // the absolute form of the same name
	}
	if len(name) == 0 {
		return dst, errors.New("empty name")
	}
	prev := byte('.') // a leading dot is an empty label
	for _, c := range name {
		switch {
		case c == '.' && prev == '.':
			return dst, errors.New("empty label")
		case c == '.', c == '-', c == '_', c == '~', '0' <= c && c <= '9', 'a' <= c && c <= 'z':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		default:
			return dst, fmt.Errorf("byte %q not allowed in a host name", c)
		}
		dst, prev = append(dst, c), c
	}
	if prev == '.' {
		return dst, errors.New("empty label")
	}
	return dst, nil
}

// appendIPLiteral appends a bracketed IPv6 literal with its hex digits
// lower case; IPvFuture and zone identifiers are refused.
func appendIPLiteral(dst, lit []byte) ([]byte, error) {
	in := lit[1 : len(lit)-1]
	if bytes.IndexByte(in, ':') < 0 {
		return dst, errors.New("IP literal without a colon")
	}
	dst = append(dst, '[')
	for _, c := range in {
		switch {
		case c == ':', c == '.', '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			c += 'a' - 'A'
		default:
			return dst, fmt.Errorf("byte %q not allowed in an IP literal", c)
		}
		dst = append(dst, c)
	}
	return append(dst, ']'), nil
}

// appendPort appends ":port" unless port is empty or the default of the
// scheme (80, or 443 over TLS).
func appendPort(dst, port []byte, tls bool) ([]byte, error) {
	for len(port) > 1 && port[0] == '0' {
		port = port[1:]
	}
	if len(port) == 0 {
		return dst, nil // "a.test:" is a.test (RFC 3986 6.2.3)
	}
	n := 0
	for _, c := range port {
		if c < '0' || c > '9' {
			return dst, fmt.Errorf("port %q is not a number", port)
		}
		if n = n*10 + int(c-'0'); n > 65535 {
			return dst, fmt.Errorf("port %q out of range", port)
		}
	}
	if n == 80 && !tls || n == 443 && tls {
		return dst, nil
	}
	return append(append(dst, ':'), port...), nil
}

// pinURI makes req's parsed URI agree with its Host and target. fasthttp
// reads an origin-form target that starts with "//" and has a "://"
// anywhere ("//x?u=http://b.test/") as an authority and a path, so the
// URI would name host "x" and path "/" where the origin gets "a.test"
// and "//x": every reader of the URI (the .htaccess rules, the docroot,
// the upstream client, which writes the request line and Host from it)
// is given the request as sent.
func pinURI(req *fasthttp.Request) {
	target := req.Header.RequestURI()
	if len(target) < 2 || target[0] != '/' || target[1] != '/' || !bytes.Contains(target, []byte("://")) {
		return
	}
	path, query := target, []byte(nil)
	if i := bytes.IndexByte(path, '#'); i >= 0 {
		path = path[:i]
	}
	if i := bytes.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i+1:]
	}
	u := req.URI()
	u.SetHostBytes(req.Header.Host())
	u.SetPathBytes(path)
	u.SetQueryStringBytes(query)
}
