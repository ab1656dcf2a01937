package purge

import (
	"bytes"
	"crypto/subtle"
	"errors"
)

// Tokens are the bearer tokens that may purge: the operator's, which
// reaches every site, and the sites' own, each reaching its site only.
// The admin API and PURGE requests take them in the same header,
// "Authorization: Bearer TOKEN".
type Tokens struct {
	Operator string // "" when the operator has none
	Sites    []SiteToken
}

// SiteToken is a bearer token that purges the one site Site names.
type SiteToken struct {
	Token, Site string
}

// Bearer is whom a request's credentials name.
type Bearer uint8

const (
	// BearerNone: the request carries no bearer token.
	BearerNone Bearer = iota
	// BearerUnknown: a bearer token that is no one's.
	BearerUnknown
	// BearerOperator: the operator's token.
	BearerOperator
	// BearerSite: a site's token.
	BearerSite
)

const bearerPrefix = "Bearer "

// Identify compares "Authorization: Bearer TOKEN" in constant time with
// every token and says whose it is, and for a site's, which site.
// Credentials of another scheme (Basic) are no bearer token.
func (t Tokens) Identify(authorization []byte) (Bearer, string) {
	if !bytes.HasPrefix(authorization, []byte(bearerPrefix)) {
		return BearerNone, ""
	}
	for _, st := range t.Sites {
		if matches(authorization, st.Token) {
			return BearerSite, st.Site
		}
	}
	if t.Operator != "" && matches(authorization, t.Operator) {
		return BearerOperator, ""
	}
	return BearerUnknown, ""
}

func matches(authorization []byte, token string) bool {
	return token != "" && subtle.ConstantTimeCompare(authorization, []byte(bearerPrefix+token)) == 1
}

// hasToken reports whether site has a token of its own.
func (t Tokens) hasToken(site string) bool {
	for _, st := range t.Sites {
		if st.Site == site {
			return true
		}
	}
	return false
}

// Refusals of a PURGE from a trusted network (MayPurge).
var (
	// ErrTokenNeeded: the purge needs a token it does not carry (401).
	ErrTokenNeeded = errors.New("purge: this site's token (or the operator's) is needed")
	// ErrOtherSite: the token is another site's (403).
	ErrOtherSite = errors.New("purge: the token is another site's")
)

// MayPurge says whether a PURGE or REFRESH from a trusted network, with
// these credentials, may purge in scope (Command.Site; "" is every site).
// A site with a token of its own is purged with that token or the
// operator's; a site without one by anyone the network trusts, since a
// site that has no token has nothing else to tell its purger by. A purge
// of every site is the operator's: it needs the operator's token.
func (t Tokens) MayPurge(authorization []byte, scope string) error {
	who, site := t.Identify(authorization)
	switch {
	case who == BearerOperator:
		return nil
	case who == BearerSite && site == scope && scope != "":
		return nil
	case who == BearerSite:
		return ErrOtherSite
	case who == BearerNone && scope != "" && !t.hasToken(scope):
		return nil
	}
	return ErrTokenNeeded
}
