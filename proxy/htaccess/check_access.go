package htaccess

import (
	"bytes"
	"encoding/base64"
)

// checkAccess applies the access control of the scopes in o.secs, as
// Apache 2.4 does with mod_access_compat and mod_authz_core: the host
// rules (Order/Allow/Deny) first, then Require, with authentication when
// Require needs a user; Satisfy Any lets either suffice. It reports
// false with o.Status set when the request is refused.
func (t *Tree) checkAccess(o *Outcome, req *Request) bool {
	var access *accessConf
	var authz *authzConf
	var auth authConf
	for _, s := range o.secs {
		if s.requireSSL && !req.HTTPS {
			return o.refuse(403, "SSLRequireSSL: not over TLS")
		}
		if s.access != nil {
			access = s.access
		}
		if s.authz != nil {
			authz = s.authz
		}
		if a := s.auth; a != nil {
			if a.typeSet {
				auth.authType = a.authType
			}
			if a.nameSet {
				auth.authName = a.authName
			}
			if a.fileSet {
				auth.userFile = a.userFile
			}
			if a.failClosed != "" {
				auth.failClosed = a.failClosed
			}
		}
	}
	switch {
	case access != nil && access.failClosed != "":
		return o.refuse(403, access.failClosed)
	case authz != nil && authz.failClosed != "":
		return o.refuse(403, authz.failClosed)
	case auth.failClosed != "":
		return o.refuse(403, auth.failClosed)
	}
	m := methodBit(req.Method)
	ctx := evalCtx{method: m, client: req.Client, env: o}
	hostOK := access == nil || access.allowed(m, req.Client, o)
	any := access != nil && access.satisfy[bitIndex(m)] == satisfyAny
	required := authz != nil && len(authz.root.children) > 0
	switch {
	case hostOK && any:
		return true
	case !hostOK && !(any && required && authz.root.needsUser()):
		return o.refuse(403, "client denied by server configuration")
	case !required:
		return hostOK
	}
	switch authz.root.eval(&ctx) {
	case authzDenied:
		return o.refuse(403, "client denied by server configuration (Require)")
	case authzDeniedNoUser:
	default:
		return true
	}
	if auth.authType != "Basic" {
		return o.refuse(500, "Require needs a user but AuthType Basic is not set")
	}
	if auth.userFile == "" {
		return o.refuse(500, "AuthType Basic without AuthUserFile")
	}
	user, ok := t.authenticate(req.Header.Peek("Authorization"), auth.userFile)
	if !ok {
		o.Realm = auth.authName
		return o.refuse(401, "user not authenticated")
	}
	ctx.user = user
	if authz.root.eval(&ctx) == authzDenied {
		o.Realm = auth.authName
		return o.refuse(401, "user "+user+": authorization failure")
	}
	o.User = user
	return true
}

func (o *Outcome) refuse(status int, cause string) bool {
	o.Status, o.Cause = status, cause
	return false
}

// authenticate checks Basic credentials against the htpasswd file.
func (t *Tree) authenticate(header []byte, file string) (string, bool) {
	cred, ok := bytes.CutPrefix(header, []byte("Basic "))
	if !ok {
		if cred, ok = bytes.CutPrefix(header, []byte("basic ")); !ok {
			return "", false
		}
	}
	raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(cred)))
	if err != nil {
		return "", false
	}
	user, pass, ok := bytes.Cut(raw, []byte(":"))
	if !ok || len(user) == 0 {
		return "", false
	}
	pf := t.passwords.get(file, t.cfg.Now(), t.cfg.Log)
	if pf == nil {
		return "", false
	}
	return pf.verify(string(user), string(pass))
}
