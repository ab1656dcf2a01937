package htaccess

import (
	"strconv"
	"time"
)

// expand appends t expanded for the request.
func (o *Outcome) expand(dst []byte, t *template, req *Request) []byte {
	return o.expandAs(dst, t, req, false)
}

// expandSubst expands a substitution; with B, back-references are
// escaped.
func (o *Outcome) expandSubst(dst []byte, t *template, req *Request, b bool) []byte {
	return o.expandAs(dst, t, req, b)
}

func (o *Outcome) expandAs(dst []byte, t *template, req *Request, escapeRefs bool) []byte {
	for i := range t.parts {
		p := &t.parts[i]
		switch p.kind {
		case partLit:
			dst = append(dst, p.lit...)
		case partRuleRef:
			dst = appendRef(dst, o.subject, o.caps, p.n, escapeRefs)
		case partCondRef:
			dst = appendRef(dst, o.condSrc, o.condCaps, p.n, escapeRefs)
		case partEnv:
			if equalFold(p.lit, "LSCACHE_VARY_VALUE") {
				dst = append(dst, o.Cache.Vary...)
				break
			}
			v, _ := o.lookupEnv(p.lit)
			dst = append(dst, v...)
		case partHeader:
			dst = append(dst, req.Header.Peek(p.lit)...)
		case partVar:
			dst = o.appendVar(dst, p.n, req)
		case partUnknown:
			// Never reached by a rule (rule.unknown fails it closed).
		}
	}
	return dst
}

// appendRef appends capture n of src ($0 the whole match); none when the
// group did not take part.
func appendRef(dst, src []byte, idx []int, n int, escape bool) []byte {
	if 2*n+1 >= len(idx) || idx[2*n] < 0 {
		return dst
	}
	v := src[idx[2*n]:idx[2*n+1]]
	if !escape {
		return append(dst, v...)
	}
	const hex = "0123456789ABCDEF"
	for _, c := range v {
		switch {
		case isAlnum(c) || c == '_' || c == '-' || c == '.':
			dst = append(dst, c)
		case c == ' ':
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', hex[c>>4], hex[c&15])
		}
	}
	return dst
}

func (o *Outcome) appendVar(dst []byte, v int, req *Request) []byte {
	switch v {
	case varRequestURI:
		return append(dst, o.uri...)
	case varQueryString:
		return append(dst, o.args...)
	case varRequestFilename:
		return append(dst, o.filename...)
	case varRequestMethod:
		return append(dst, req.Method...)
	case varHTTPS:
		if req.HTTPS {
			return append(dst, "on"...)
		}
		return append(dst, "off"...)
	case varServerPort:
		return strconv.AppendInt(dst, int64(req.Port), 10)
	case varRemoteAddr:
		return req.Client.AppendTo(dst)
	case varRemotePort:
		return strconv.AppendInt(dst, int64(req.ClientPort), 10)
	case varTheRequest:
		return append(dst, req.RequestLine...)
	case varDocumentRoot:
		return append(dst, o.docRoot...)
	case varHost:
		return append(dst, req.Header.Peek("Host")...)
	case varServerName:
		return append(dst, hostOnly(req.Host)...)
	case varRequestScheme:
		if req.HTTPS {
			return append(dst, "https"...)
		}
		return append(dst, "http"...)
	case varServerProtocol:
		return append(dst, req.Protocol...)
	case varPathInfo:
		return append(dst, o.pathInfo...)
	case varRemoteUser:
		return append(dst, o.User...)
	case varAuthType:
		if o.User != "" {
			return append(dst, "Basic"...)
		}
		return dst
	case varServerSoftware:
		return append(dst, "ramjet"...)
	case varScriptName:
		return append(dst, o.uri...)
	case varTimeYear:
		return strconv.AppendInt(dst, int64(time.Now().Year()), 10)
	case varTime:
		return time.Now().AppendFormat(dst, "20060102150405")
	case varTimeMon:
		return time.Now().AppendFormat(dst, "01")
	case varTimeDay:
		return time.Now().AppendFormat(dst, "02")
	case varTimeHour:
		return time.Now().AppendFormat(dst, "15")
	case varTimeMin:
		return time.Now().AppendFormat(dst, "04")
	case varTimeSec:
		return time.Now().AppendFormat(dst, "05")
	case varTimeWday:
		return strconv.AppendInt(dst, int64(time.Now().Weekday()), 10)
	}
	return o.appendMoreVar(dst, v, req)
}

// appendMoreVar appends the variables Apache and LiteSpeed have beyond
// mod_rewrite's usual ones.
func (o *Outcome) appendMoreVar(dst []byte, v int, req *Request) []byte {
	switch v {
	case varOrgReqURI:
		// The path asked for, before any rewrite: decoded, as the cache
		// key holds it (LiteSpeed's is still percent-encoded, so
		// /%61dmin/ would slip past a !/admin exclusion and have its
		// answer stored under /admin/'s key).
		return append(dst, req.Path...)
	case varOrgQueryString:
		return append(dst, req.Query...)
	case varCurrentURI:
		return append(dst, o.uri...)
	case varRequestBasename:
		f := o.filename
		for i := len(f) - 1; i >= 0; i-- {
			if f[i] == '/' {
				return append(dst, f[i+1:]...)
			}
		}
		return append(dst, f...)
	case varScriptURI:
		dst = o.appendVar(dst, varRequestScheme, req)
		dst = append(append(dst, "://"...), req.Host...)
		return append(dst, req.Path...)
	case varIsSubreq:
		return append(dst, "false"...)
	case varConnRemoteAddr:
		return req.Client.AppendTo(dst)
	case varContextDocRoot:
		return append(dst, o.docRoot...)
	}
	return dst
}

// hostOnly is a Host header without its port.
func hostOnly(h []byte) []byte {
	if len(h) > 0 && h[0] == '[' {
		for i, c := range h {
			if c == ']' {
				return h[:i+1]
			}
		}
		return h
	}
	for i := len(h) - 1; i >= 0; i-- {
		if h[i] == ':' {
			return h[:i]
		}
		if h[i] < '0' || h[i] > '9' {
			break
		}
	}
	return h
}
