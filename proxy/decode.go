package proxy

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/valyala/fasthttp"
)

// A stored body is always the identity body: ramjet reads what it keeps
// (an ESI page is parsed, a fragment spliced into pages, and any entry
// may later be included as a fragment), and compresses it itself for the
// clients that accept it. Fills ask for identity (fillOnly drops
// Accept-Encoding), but origins may compress anyway — PHP's
// zlib.output_compression, a script that gzips its own output, nginx's
// gzip_static always — so what arrives coded is decoded before it is
// parsed or stored.

// Errors of decodeBody.
var (
	// errUnknownCoding: a content coding ramjet cannot undo (deflate,
	// zstd, compress, …).
	errUnknownCoding = errors.New("proxy: unknown content coding")
	// errDecodedTooLarge: the decoded body would pass
	// cache.max_object_size (a decompression bomb stops there). It is
	// not fasthttp.ErrBodyTooLarge, which means the client's body (413).
	errDecodedTooLarge = errors.New("proxy: decoded body larger than max_object_size")
	// errTooManyCodings: more than maxCodings codings; each layer may
	// cost up to max_object_size of decoding.
	errTooManyCodings = errors.New("proxy: too many content codings")
)

// maxCodings bounds the codings decodeBody undoes: real origins apply one.
const maxCodings = 4

// decodeBody undoes the content codings of body, as listed in a
// Content-Encoding value ("gzip", "br", "gzip, br": codings are listed in
// the order they were applied, so they are undone from the last; identity
// and empty items are no-ops). It returns body itself when there is
// nothing to undo. The decoded body never takes more than limit bytes:
// past it decoding stops with errDecodedTooLarge.
func decodeBody(body, codings []byte, limit int64) ([]byte, error) {
	n := countCodings(codings)
	switch {
	case len(body) == 0 || n == 0:
		return body, nil
	case n > maxCodings:
		return nil, fmt.Errorf("proxy: decode %.40q body: %w", codings, errTooManyCodings)
	}
	out := body
	for rest := codings; len(rest) > 0; {
		var c []byte
		rest, c = lastItem(rest)
		if isIdentity(c) {
			continue
		}
		var err error
		if out, err = undo(out, c, limit); err != nil {
			return nil, fmt.Errorf("proxy: decode %.40q body: %w", codings, err)
		}
	}
	return out, nil
}

// countCodings counts the codings a Content-Encoding value names besides
// identity: the common case, none, costs one look.
func countCodings(codings []byte) int {
	n := 0
	for rest := codings; len(rest) > 0; {
		var c []byte
		rest, c = lastItem(rest)
		if !isIdentity(c) {
			n++
		}
	}
	return n
}

func isIdentity(coding []byte) bool {
	return len(coding) == 0 || bytes.EqualFold(coding, []byte("identity"))
}

// lastItem splits the last comma-separated item off list, trimmed.
func lastItem(list []byte) (rest, item []byte) {
	i := bytes.LastIndexByte(list, ',')
	return list[:max(i, 0)], bytes.TrimSpace(list[i+1:])
}

// undo removes one coding.
func undo(body, coding []byte, limit int64) ([]byte, error) {
	w := &boundedBuffer{b: make([]byte, 0, min(int64(len(body))*4+512, limit)), limit: limit}
	var err error
	switch {
	case bytes.EqualFold(coding, encGzip), bytes.EqualFold(coding, []byte("x-gzip")):
		_, err = fasthttp.WriteGunzip(w, body)
	case bytes.EqualFold(coding, encBrotli):
		_, err = fasthttp.WriteUnbrotli(w, body)
	default:
		return nil, fmt.Errorf("%w %q", errUnknownCoding, coding)
	}
	if err != nil {
		return nil, err
	}
	return w.b, nil
}

// boundedBuffer collects decoded bytes and refuses those past limit, which
// ends the decoder's copy: a bomb costs at most limit bytes (and one
// decoder chunk of work past it).
type boundedBuffer struct {
	b     []byte
	limit int64
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	if int64(len(w.b))+int64(len(p)) > w.limit {
		return 0, errDecodedTooLarge
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

// acceptsCodings reports whether a client sending accept can read a body
// in codings: every coding listed, identity aside, is one it accepts.
func acceptsCodings(accept, codings []byte) bool {
	for rest := codings; len(rest) > 0; {
		var c []byte
		rest, c = lastItem(rest)
		if !isIdentity(c) && !accepts(accept, c) {
			return false
		}
	}
	return true
}

// keepDecodableCodings narrows a forwarded request's Accept-Encoding to
// the codings ramjet can undo (gzip, x-gzip, br, identity; "*" becomes
// "gzip, br"), so that an ESI page relayed from a pass can be decoded
// and assembled. A header that names nothing else is left as it is.
func keepDecodableCodings(h *fasthttp.RequestHeader) {
	accept := peekCanonical(h, "Accept-Encoding")
	if len(accept) == 0 || onlyDecodable(accept) {
		return
	}
	var kept []byte
	for rest := accept; len(rest) > 0; {
		var item []byte
		item, rest = cutItem(rest, ',')
		name, params, _ := bytes.Cut(item, []byte{';'})
		name = bytes.TrimSpace(name)
		switch {
		case decodable(name):
		case len(name) == 1 && name[0] == '*' && !qZero(params):
			item = []byte("gzip, br")
		default:
			continue
		}
		if len(kept) > 0 {
			kept = append(kept, ", "...)
		}
		kept = append(kept, bytes.TrimSpace(item)...)
	}
	if len(kept) == 0 {
		h.Del("Accept-Encoding")
		return
	}
	h.SetBytesV("Accept-Encoding", kept)
}

func onlyDecodable(accept []byte) bool {
	for rest := accept; len(rest) > 0; {
		var item []byte
		item, rest = cutItem(rest, ',')
		name, _, _ := bytes.Cut(item, []byte{';'})
		if name = bytes.TrimSpace(name); len(name) > 0 && !decodable(name) {
			return false
		}
	}
	return true
}

// decodable reports whether decodeBody undoes a coding.
func decodable(coding []byte) bool {
	return bytes.EqualFold(coding, encGzip) || bytes.EqualFold(coding, []byte("x-gzip")) ||
		bytes.EqualFold(coding, encBrotli) || bytes.EqualFold(coding, []byte("identity"))
}
