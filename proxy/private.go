package proxy

import (
	"bytes"
	"hash/maphash"
	"strconv"

	"github.com/valyala/fasthttp"
)

// The private cache keeps per-user copies, as LSCache's does: a user is
// their session cookies (cookies that identify nobody are ignored), their
// credentials and their address. A client with no session has no identity
// and gets no private caching, so two anonymous visitors behind one
// address can never share a private entry.

// ignoredIdentityCookie lists cookies LSCache leaves out of the private
// identity: analytics, test and the vary cookie itself.
func ignoredIdentityCookie(name []byte) bool {
	return bytes.HasPrefix(name, []byte("__")) || bytes.HasPrefix(name, []byte("_ga")) ||
		bytes.Equal(name, []byte("has_js")) || bytes.Equal(name, []byte("_lscache_vary")) ||
		bytes.Equal(name, []byte("wordpress_test_cookie")) || bytes.Equal(name, []byte("ls_smartpush")) ||
		bytes.HasPrefix(name, []byte("bb_forum_view"))
}

// identity is the client's private-cache identity, 0 when it has none.
// Cookie order does not matter. It does not allocate.
func (p *Proxy) identity(ctx *fasthttp.RequestCtx) uint64 {
	h := &ctx.Request.Header
	var id uint64
	var mh maphash.Hash
	mh.SetSeed(p.idSeed)
	for name, value := range h.Cookies() {
		if ignoredIdentityCookie(name) || len(value) == 0 {
			continue
		}
		mh.Reset()
		mh.Write(name)
		mh.WriteByte('=')
		mh.Write(value)
		id ^= mh.Sum64()
	}
	if auth := h.Peek("Authorization"); len(auth) > 0 {
		mh.Reset()
		mh.WriteString("authorization:")
		mh.Write(auth)
		id ^= mh.Sum64()
	}
	if id == 0 {
		return 0
	}
	mh.Reset()
	mh.Write(ctx.RemoteIP())
	return id ^ mh.Sum64() | 1 // never 0 once there is a session
}

// appendPrivateKey is the private cache key: identity, then the page key.
func appendPrivateKey(dst []byte, id uint64, key []byte) []byte {
	dst = strconv.AppendUint(dst, id, 16)
	dst = append(dst, '|')
	return append(dst, key...)
}

// privateTags maps a private response's tags into its owner's namespace,
// so that "private, tag=x" from one user purges only their copies; a
// "public:" tag stays public, so public purges reach the private copies
// too (LSCache). Every private entry also carries its owner's "*" tag.
func privateTags(id uint64, tags []string) []string {
	prefix := strconv.FormatUint(id, 16) + "\x00"
	out := make([]string, 0, len(tags)+1)
	for _, t := range tags {
		if pub, ok := bytes.CutPrefix([]byte(t), []byte("public:")); ok {
			out = append(out, string(pub))
			continue
		}
		out = append(out, prefix+t)
	}
	return append(out, prefix+"*")
}

// privateTag is the namespaced name of one user's tag.
func privateTag(id uint64, tag string) string {
	return strconv.FormatUint(id, 16) + "\x00" + tag
}
