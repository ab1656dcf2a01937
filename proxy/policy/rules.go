package policy

import "time"

// rules is the caching policy of one response, normalised from the header
// that governs it (see the package doc).
type rules struct {
	reason  string // non-empty: the header forbids storing
	private bool   // LSCache private response
	only200 bool   // LSCache header without max-age: only 200 is stored
	shared  bool   // explicitly shareable despite Authorization (RFC 9111 3.5)

	lifetime    time.Duration // freshness lifetime, when hasLifetime
	hasLifetime bool          // the response gave explicit freshness

	swr, sie       time.Duration // explicit stale windows, when hasSWR / hasSIE
	hasSWR, hasSIE bool
	noStale        bool // must-revalidate / proxy-revalidate / s-maxage: never serve stale
	// revalidateAlways: Cache-Control no-cache with validators: stored,
	// but every use is revalidated (RFC 9111 5.2.2.4).
	revalidateAlways bool
}

func governingRules(in *Input, ls *LSCacheControl, sc *SurrogateControl) rules {
	if ls.Present {
		return lsRules(ls)
	}
	if t := trimOWS(in.Targeted); len(t) > 0 && validTargeted(t) {
		// RFC 9213 2.1: a targeted field replaces Cache-Control and
		// Expires for the cache it targets.
		tc := ParseCacheControl(in.Targeted)
		return cacheControlRules(in, &SurrogateControl{}, &tc, false)
	}
	cc := ParseCacheControl(in.CacheControl)
	if sc.HasMaxAge {
		return surrogateRules(sc, &cc)
	}
	return cacheControlRules(in, sc, &cc, true)
}

// lsRules follows OpenLiteSpeed: the LSCache header is the whole policy.
func lsRules(ls *LSCacheControl) rules {
	var r rules
	switch {
	case ls.NoStore:
		r.reason = ReasonNoStore
	case ls.NoCache:
		r.reason = ReasonNoCache
	case ls.Private:
		r.reason, r.private = ReasonPrivate, true
	}
	r.shared = ls.Public || ls.HasSMaxAge
	switch {
	case ls.HasSMaxAge:
		r.setLifetime(ls.SMaxAge)
	case ls.HasMaxAge:
		r.setLifetime(ls.MaxAge)
	default:
		r.only200 = true
	}
	if ls.HasMaxStale {
		r.swr, r.hasSWR = seconds(ls.MaxStale), true
	}
	return r
}

// surrogateRules: Surrogate-Control max-age overrides Cache-Control's
// freshness, no-cache and no-store (which then address browsers, as the
// Edge Architecture has it), but not its private: a response marked for
// one user is never shared.
func surrogateRules(sc *SurrogateControl, cc *CacheControl) rules {
	var r rules
	switch {
	case sc.NoStore:
		r.reason = ReasonNoStore
	case cc.Private:
		r.reason = ReasonPrivate
	}
	r.shared = sharedByCacheControl(cc)
	r.setLifetime(sc.MaxAge)
	if sc.Stale > 0 {
		r.sie, r.hasSIE = seconds(sc.Stale), true
	}
	return r
}

// cacheControlRules reads Cache-Control (or a targeted field with its
// grammar) as a shared cache (RFC 9111), with Expires as the fallback
// lifetime when useExpires.
func cacheControlRules(in *Input, sc *SurrogateControl, cc *CacheControl, useExpires bool) rules {
	var r rules
	switch {
	case sc.NoStore || cc.NoStore:
		r.reason = ReasonNoStore
	case cc.Private:
		r.reason = ReasonPrivate
	case cc.NoCache && !in.Validators:
		r.reason = ReasonNoCache // nothing to revalidate with: storing gains nothing
	case cc.NoCache:
		r.revalidateAlways = true
	}
	r.shared = sharedByCacheControl(cc)
	// s-maxage carries proxy-revalidate for a shared cache (RFC 9111 5.2.2.10).
	r.noStale = cc.MustRevalidate || cc.ProxyRevalidate || cc.HasSMaxAge || r.revalidateAlways
	r.swr, r.hasSWR = seconds(cc.StaleWhileRevalidate), cc.HasSWR
	r.sie, r.hasSIE = seconds(cc.StaleIfError), cc.HasSIE
	switch {
	case cc.HasSMaxAge:
		r.setLifetime(cc.SMaxAge)
	case cc.HasMaxAge:
		r.setLifetime(cc.MaxAge)
	case useExpires && len(in.Expires) > 0:
		r.lifetime, r.hasLifetime = expiresLifetime(in), true
	}
	return r
}

// sharedByCacheControl reports whether Cache-Control lets a shared cache
// store a response to a request with Authorization (RFC 9111 3.5).
func sharedByCacheControl(cc *CacheControl) bool {
	return cc.Public || cc.HasSMaxAge || cc.MustRevalidate
}

func (r *rules) setLifetime(sec int) { r.lifetime, r.hasLifetime = seconds(sec), true }

// expiresLifetime is Expires minus Date (Now when Date is missing or
// invalid), clamped to [0, a year]; an invalid Expires means already expired.
func expiresLifetime(in *Input) time.Duration {
	exp, ok := ParseHTTPDate(in.Expires)
	if !ok {
		return 0
	}
	date, ok := ParseHTTPDate(in.Date)
	if !ok {
		date = in.Now
	}
	return max(min(exp.Sub(date), seconds(maxSeconds)), 0)
}

// ttl is the freshness left at in.Now: the lifetime (explicit, else
// DefaultTTL for the statuses it applies to) minus the response's Age.
func (r *rules) ttl(in *Input) (time.Duration, string) {
	life := r.lifetime
	if !r.hasLifetime {
		var ok bool
		if life, ok = implicitLifetime(in); !ok {
			return 0, ReasonNoTTL
		}
	}
	ttl := life - age(in.Age)
	if ttl <= 0 {
		return 0, ReasonExpired
	}
	return ttl, ""
}

// maxHeuristic caps a heuristic lifetime.
const maxHeuristic = 24 * time.Hour

// implicitLifetime is the lifetime of a response without explicit
// freshness: heuristic (10 % of the Last-Modified age, when the site asks
// for it), else the site's DefaultTTL, for the statuses each applies to.
func implicitLifetime(in *Input) (time.Duration, bool) {
	if in.Heuristic && heuristicStatus(in.Status) {
		if lm, ok := ParseHTTPDate(in.LastModified); ok {
			date, ok := ParseHTTPDate(in.Date)
			if !ok {
				date = in.Now
			}
			if age := date.Sub(lm); age > 0 {
				return min(age/10, maxHeuristic), true
			}
		}
	}
	if in.DefaultTTL <= 0 || !defaultTTLStatus(in.Status) {
		return 0, false
	}
	return min(in.DefaultTTL, seconds(maxSeconds)), true
}

// heuristicStatus reports whether RFC 9111 4.2.2 lets a response with
// this status be given a heuristic lifetime (206 aside: the cache keeps
// whole bodies only).
func heuristicStatus(status int) bool {
	switch status {
	case 200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501:
		return true
	}
	return false
}

// stale returns the stale-while-revalidate and stale-if-error windows.
func (r *rules) stale(grace time.Duration) (swr, sie time.Duration) {
	if r.noStale {
		return 0, 0
	}
	grace = max(grace, 0)
	swr, sie = grace, grace
	if r.hasSWR {
		swr = r.swr
	}
	if r.hasSIE {
		sie = r.sie
	}
	return swr, sie
}

// age parses the first value of an Age header; invalid means 0.
func age(v []byte) time.Duration {
	start, end, _ := nextItem(v, 0)
	n, _ := parseSeconds(v[start:end])
	return seconds(n)
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }
