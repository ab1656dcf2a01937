package proxy

import (
	"slices"

	"github.com/valyala/fasthttp"
)

// Cookies are read through fasthttp's parsed cookie list: after the first
// request on a connection it is reused, so reading it does not allocate,
// whereas re-serialising the Cookie header would.

// hasCookie reports whether any request cookie name matches p.
func hasCookie(h *fasthttp.RequestHeader, p *patterns) bool {
	if len(p.exact) == 0 && len(p.prefixes) == 0 {
		return false
	}
	for name := range h.Cookies() {
		if p.match(name) {
			return true
		}
	}
	return false
}

// cookieValue returns the value of the named request cookie, or nil.
func cookieValue(h *fasthttp.RequestHeader, name string) []byte {
	return h.Cookie(name)
}

// anonymousCookie reports whether a request cookie identifies nobody:
// analytics, consent and the cache's own test and vary cookies, named one
// by one (a prefix only where the tool appends an id). Everything else is
// a session: cookies named like "__Host-sid" or "__Secure-sid" most of
// all. The private identity leaves these out, and only these let a
// default TTL store the answer to a request that carries cookies.
func anonymousCookie(name []byte) bool {
	switch string(name) {
	case "__utma", "__utmb", "__utmc", "__utmt", "__utmv", "__utmx", "__utmz", // Google Analytics (urchin)
		"_ga", "_gid", "_gat", // Google Analytics
		"_fbp", "_fbc", // Meta
		"__hstc", "__hssc", "__hssrc", "hubspotutk", // HubSpot
		"_uetsid", "_uetvid", "_clck", "_clsk", // Microsoft Ads, Clarity
		"CookieConsent", "OptanonConsent", "OptanonAlertBoxClosed", "euconsent-v2",
		"cookieyes-consent", "viewed_cookie_policy", "cookie_notice_accepted", "moove_gdpr_popup", // consent banners
		"has_js", "_lscache_vary", "wordpress_test_cookie", "ls_smartpush": // LSCache's own list
		return true
	}
	for _, p := range anonymousPrefixes {
		if len(name) >= len(p) && string(name[:len(p)]) == p { // no copy, unlike []byte(p)
			return true
		}
	}
	return false
}

// anonymousPrefixes are the analytics cookies named by an id appended to
// a fixed prefix.
var anonymousPrefixes = [...]string{
	"_ga_", "_gat_", "_gac_", "_gcl_", "_dc_gtm_", // Google Analytics, Ads, Tag Manager
	"_hj",                     // Hotjar
	"_pk_",                    // Matomo
	"cmplz_",                  // Complianz consent
	"cookielawinfo-checkbox-", // CookieYes (GDPR Cookie Consent) consent
	"bb_forum_view",           // LSCache's list
}

// sessionCookie reports whether h carries a cookie that may identify its
// sender: a non-empty one that is neither anonymous (anonymousCookie's or
// the site's own) nor selects the variant (varying: those key the answer
// by their value).
func sessionCookie(h *fasthttp.RequestHeader, varying []string, site *patterns) bool {
	for name, value := range h.Cookies() {
		if len(value) > 0 && !anonymousCookie(name) && !site.match(name) && !slices.Contains(varying, string(name)) {
			return true
		}
	}
	return false
}
