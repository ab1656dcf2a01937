package htaccess

import (
	"bytes"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// ResponseHeader is what the response-side directives change
// (fasthttp's ResponseHeader has these methods).
type ResponseHeader interface {
	Peek(key string) []byte
	Set(key, value string)
	Add(key, value string)
	Del(key string)
}

// Answer describes the response the directives apply to.
type Answer struct {
	Status int
	// File is the static file served ("" for a script's output); its
	// extension picks AddType and its time ExpiresByType's M base.
	File    string
	ModTime time.Time
	// Generated: the server made this answer itself (an error page),
	// so only "Header always" applies.
	Generated bool
	// Script: a PHP script's answer. Its own headers are out of reach of
	// "Header unset" without "always", as with Apache and php-fpm (whose
	// headers land in err_headers_out: the well-known
	// "Header always unset X-Powered-By").
	Script bool
}

// MimeType is the type a static file is served with when the scopes
// say one: a rule's T=, ForceType, AddType by extension; "" otherwise.
func (o *Outcome) MimeType(file string) string {
	if o.Mime != "" {
		return o.Mime
	}
	force := ""
	for _, s := range o.secs {
		if s.forceType != "" {
			force = s.forceType
		}
	}
	if force != "" && !strings.EqualFold(force, "none") {
		return force
	}
	ext := strings.ToLower(path.Ext(file))
	t := ""
	for _, s := range o.secs {
		for _, m := range s.types {
			if m.ext == ext {
				t = m.mime
			}
		}
	}
	return t
}

// DirectoryIndex is the scopes' DirectoryIndex list, ok false when none
// set one (an empty list: "disabled").
func (o *Outcome) DirectoryIndex() ([]string, bool) {
	var list []string
	set := false
	for _, s := range o.secs {
		if s.dirIndex != nil {
			list, set = s.dirIndex, true
		}
	}
	return list, set
}

// ErrorDocument kinds.
const (
	DocNone  = iota // the server's own page
	DocLocal        // a local URL path to serve with the error's status
	DocURL          // a URL to redirect to (302)
	DocText         // the text itself is the body
)

// ErrorDocument is what the scopes answer status with.
func (o *Outcome) ErrorDocument(status int) (kind int, value string) {
	kind = DocNone
	for _, s := range o.secs {
		for _, d := range s.errorDocs {
			if d.status != status {
				continue
			}
			switch d.kind {
			case docLocal:
				kind, value = DocLocal, d.value
			case docURL:
				kind, value = DocURL, d.value
			case docText:
				kind, value = DocText, d.value
			case docDefault:
				kind, value = DocNone, ""
			}
		}
	}
	return kind, value
}

// Apply runs the response-side directives on an answer's header: the
// default charset, FileETag None, ExpiresActive/ExpiresByType, Header,
// and the rules' CO= cookies.
func (o *Outcome) Apply(a Answer, h ResponseHeader, now time.Time) {
	if len(o.secs) == 0 && len(o.cookies) == 0 {
		return
	}
	o.applyCharset(h)
	if a.File != "" && o.fileETagNone() {
		h.Del("ETag")
	}
	if !a.Generated && (a.Status == 200 || a.Status == 304) {
		o.applyExpires(a, h, now)
	}
	for _, s := range o.secs {
		for _, op := range s.headers {
			if a.Generated && !op.always || op.env != "" && !o.envCond(op.env) ||
				a.Script && !op.always && op.action == "unset" {
				continue
			}
			o.applyHeader(op, h)
		}
	}
	for _, c := range o.cookies {
		h.Add("Set-Cookie", string(c))
	}
}

func (o *Outcome) envCond(env string) bool {
	if name, neg := strings.CutPrefix(env, "!"); neg {
		return !o.has(name)
	}
	return o.has(env)
}

func (o *Outcome) applyCharset(h ResponseHeader) {
	cs := ""
	for _, s := range o.secs {
		if s.charset != "" {
			cs = s.charset
		}
	}
	if cs == "" || cs == "off" {
		return
	}
	ct := h.Peek("Content-Type")
	if bytes.Contains(ct, []byte("charset=")) || !(bytes.HasPrefix(ct, []byte("text/plain")) || bytes.HasPrefix(ct, []byte("text/html"))) {
		return
	}
	mt, _, _ := bytes.Cut(ct, []byte{';'})
	h.Set("Content-Type", string(bytes.TrimSpace(mt))+"; charset="+cs)
}

func (o *Outcome) fileETagNone() bool {
	v := ""
	for _, s := range o.secs {
		if s.fileETag != "" {
			v = s.fileETag
		}
	}
	return v == "none"
}

// applyExpires sets Cache-Control max-age and Expires as mod_expires
// does, unless the answer carries an Expires of its own.
func (o *Outcome) applyExpires(a Answer, h ResponseHeader, now time.Time) {
	active := false
	var def *expiry
	for _, s := range o.secs {
		if e := s.expires; e != nil {
			if e.activeSet {
				active = e.active
			}
			if e.def != nil {
				def = e.def
			}
		}
	}
	if !active || len(h.Peek("Expires")) > 0 {
		return
	}
	ct := h.Peek("Content-Type")
	mt, _, _ := bytes.Cut(ct, []byte{';'})
	// The type lowered, and "type/*", in the outcome's buffers: looked
	// up without a string made for either.
	o.tmp = appendLower(o.tmp[:0], bytes.TrimSpace(mt))
	mt = o.tmp
	o.scratch = o.scratch[:0]
	if i := bytes.IndexByte(mt, '/'); i >= 0 {
		o.scratch = append(append(o.scratch, mt[:i+1]...), '*')
	}
	var found expiry // a copy: a pointer to it would put it on the heap
	ok := false
	for _, s := range o.secs {
		if s.expires == nil || s.expires.byType == nil {
			continue
		}
		if e, hit := s.expires.byType[string(mt)]; hit {
			found, ok = e, true
			continue
		}
		if len(o.scratch) > 0 {
			if e, hit := s.expires.byType[string(o.scratch)]; hit {
				found, ok = e, true
			}
		}
	}
	if !ok && def != nil {
		found, ok = *def, true
	}
	if !ok {
		return
	}
	at := found.at(now, a.ModTime)
	age := int64(at.Sub(now) / time.Second)
	if age < 0 {
		age = 0
	}
	v := "max-age=" + strconv.FormatInt(age, 10)
	if cc := h.Peek("Cache-Control"); len(cc) > 0 {
		v = string(cc) + ", " + v
	}
	h.Set("Cache-Control", v)
	h.Set("Expires", at.UTC().Format(http.TimeFormat))
}

func (o *Outcome) applyHeader(op *headerOp, h ResponseHeader) {
	switch op.action {
	case "set":
		h.Set(op.name, o.headerValue(op.value))
	case "add":
		h.Add(op.name, o.headerValue(op.value))
	case "append", "merge":
		v := o.headerValue(op.value)
		old := h.Peek(op.name)
		switch {
		case len(old) == 0:
			h.Set(op.name, v)
		case op.action == "merge" && hasToken(old, v):
		default:
			h.Set(op.name, string(old)+", "+v)
		}
	case "setifempty":
		if len(h.Peek(op.name)) == 0 {
			h.Set(op.name, o.headerValue(op.value))
		}
	case "unset":
		h.Del(op.name)
	}
}

// headerValue expands mod_headers' %{NAME}e and %% in a value.
func (o *Outcome) headerValue(v string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '%' || i+1 >= len(v) {
			b.WriteByte(v[i])
			continue
		}
		if v[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if v[i+1] == '{' {
			if end := strings.Index(v[i:], "}e"); end > 0 {
				val, _ := o.lookupEnv(v[i+2 : i+end])
				b.Write(val)
				i += end + 1
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func hasToken(list []byte, tok string) bool {
	for len(list) > 0 {
		var it []byte
		it, list, _ = bytes.Cut(list, []byte{','})
		if string(bytes.TrimSpace(it)) == tok {
			return true
		}
	}
	return false
}

// appendLower appends b with ASCII letters lowered (what bytes.ToLower
// does to a media type, into dst).
func appendLower(dst, b []byte) []byte {
	if hasNonASCII(b) {
		return append(dst, bytes.ToLower(b)...)
	}
	for _, c := range b {
		dst = append(dst, lower(c))
	}
	return dst
}
