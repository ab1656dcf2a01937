package proxy

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/docroot"
)

// A client's Connection header names the fields that concern only its
// hop (RFC 9110 7.6.1), and a proxy removes them. A client could name
// any field there: Host, so the origin answers from its default virtual
// host while ramjet stores the answer under the site the Host named; a
// field the page varies on, so the origin answers without it under the
// variant of its value. So the fields ramjet routes, keys or decides on,
// and those it sets itself, are never removed on a client's word; every
// other field it names is removed from the client's request in admit,
// before any stage reads it, so that what ramjet computes and what the
// origin gets agree.

// keptFields are never removed because a client's Connection header
// names them.
var keptFields = []string{
	"Host", "Cookie", "Authorization", "Accept-Encoding", "Accept-Language", "User-Agent",
	"Content-Length", "Content-Type", "Content-Encoding",
	"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded", "X-Real-Ip",
	"X-Lscache", "Surrogate-Capability", docroot.HeaderRemotePort, docroot.HeaderServerAddr,
}

// removable reports whether a field the client's Connection header
// names may be removed from what the origin gets.
func removable(name []byte) bool { return len(name) > 0 && !foldIn(name, keptFields) }

// forListed calls drop with every removable field the Connection lines
// of h name (every line, not only the first); the options that name no
// field ("keep-alive", which every browser sends, and "close") are
// skipped first. drop may delete fields other than Connection.
func forListed(h *fasthttp.RequestHeader, drop func(name []byte)) {
	h.DisableNormalizing() // "Connection" is canonical: no pass over it
	lines := h.PeekAll("Connection")
	h.EnableNormalizing()
	for _, line := range lines {
		if isConnectionOption(line) {
			continue // the whole line one option, as browsers send it
		}
		for len(line) > 0 {
			var tok []byte
			tok, line = cutItem(line, ',')
			if tok = bytes.TrimSpace(tok); !isConnectionOption(tok) && removable(tok) {
				drop(tok)
			}
		}
	}
}

// isConnectionOption reports the Connection options that name no field.
func isConnectionOption(tok []byte) bool {
	switch len(tok) { // EqualFold compares byte by byte: most tokens differ in length
	case len("close"):
		return bytes.EqualFold(tok, []byte("close"))
	case len("keep-alive"):
		return bytes.EqualFold(tok, []byte("keep-alive"))
	}
	return false
}

// settleConnection removes what the client's Connection header names
// from its request (but keptFields and the hop-by-hop fields, which frame
// the body and the connection: stripHopByHop removes those from what
// goes upstream). A request with both Content-Length and
// Transfer-Encoding needs nothing here: fasthttp closes its connection
// after the answer (RFC 9112 6.1), TestBothLengthsCloseTheConnection.
func settleConnection(h *fasthttp.RequestHeader) {
	if len(h.RawHeaders()) == 0 || len(peekCanonical(h, "Connection")) == 0 {
		return // HTTP/2 and HTTP/3 have no Connection field
	}
	forListed(h, func(tok []byte) {
		if !foldIn(tok, hopByHop[:]) {
			h.DelBytes(tok)
		}
	})
}

// hasField reports whether raw header lines hold a field name (lower
// case).
func hasField(raw []byte, name string) bool {
	for len(raw) > 0 {
		line, rest, _ := bytes.Cut(raw, []byte{'\n'})
		if len(line) > len(name) && line[len(name)] == ':' && bytes.EqualFold(line[:len(name)], []byte(name)) {
			return true
		}
		raw = rest
	}
	return false
}
