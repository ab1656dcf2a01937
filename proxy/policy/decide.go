package policy

import "time"

// Input is the raw header values of one origin response and of the request that caused it.
// Empty slices mean the header was absent. Multiple header lines of one name are joined with ", " by the caller,
// except TagHeaders which holds each tag-header line as given.
type Input struct {
	Now              time.Time
	Method           string // request method, upper case
	Status           int
	Authorization    bool   // request carried Authorization
	SetCookie        bool   // response carries Set-Cookie
	LSCacheControl   []byte // X-LiteSpeed-Cache-Control
	SurrogateControl []byte
	// Targeted is the targeted cache-control field that addresses this
	// cache (RFC 9213): its own, else CDN-Cache-Control; nil when absent.
	Targeted     []byte
	CacheControl []byte
	Expires      []byte
	Date         []byte
	LastModified []byte
	Age          []byte
	Vary         []byte        // response Vary
	LSVary       []byte        // X-LiteSpeed-Vary (e.g. "cookie=wp-postpass_abc, cookie=x")
	TagHeaders   [][]byte      // values of X-LiteSpeed-Tag, Surrogate-Key, Cache-Tag, xkey
	DefaultTTL   time.Duration // site default for responses with no freshness info (0 = don't store those)
	// Heuristic allows a lifetime of 10 % of the Last-Modified age for
	// responses with no explicit freshness (RFC 9111 4.2.2).
	Heuristic      bool
	Grace          time.Duration // site default stale window (used when the response gives none)
	CacheSetCookie bool          // LSCache respCookieCache
	// Validators: the response has an ETag or a Last-Modified, so a copy
	// can be revalidated with a conditional request.
	Validators bool
}

// Decision is what Decide makes of one response.
type Decision struct {
	Store  bool
	Reason string // when !Store: one of the Reason constants

	// TTL is the remaining freshness at Input.Now (Age already subtracted);
	// > 0 when Store, except for no-cache (0: revalidated on every use).
	TTL time.Duration
	// StaleWhileRevalidate is how long after TTL the entry may be served
	// while it is refreshed: the response's stale-while-revalidate (or LS
	// max-stale), else Input.Grace. 0 with must-revalidate/proxy-revalidate.
	StaleWhileRevalidate time.Duration
	// StaleIfError is how long after TTL the entry may be served when the
	// origin fails: the response's stale-if-error (or Surrogate-Control
	// max-age=N+M), else Input.Grace. 0 with must-revalidate/proxy-revalidate.
	StaleIfError time.Duration

	// MustRevalidate: once not fresh the entry may only be used after a
	// successful revalidation (must-revalidate, proxy-revalidate,
	// s-maxage, or no-cache, whose TTL is then 0).
	MustRevalidate bool
	// Shared: the response says a shared cache may give it to requests
	// with Authorization (public, s-maxage, must-revalidate; RFC 9111
	// 3.5), whatever request stored it.
	Shared bool
	// Keep is how long past its last serving window a copy with
	// validators is kept to be revalidated instead of fetched again.
	Keep time.Duration
	// Implicit: the lifetime is the site's (DefaultTTL or heuristic
	// freshness), not the response's. The caller refuses such a response
	// to a request that carried a session (ReasonCookie), which policy
	// cannot see.
	Implicit bool

	// Private is an LSCache private response: Store=false (the shared
	// cache must not keep it), Reason "private", and TTL, stale windows and
	// lists filled for the per-user cache.
	Private bool
	NoVary  bool // LSCache no-vary
	ESI     bool // LS esi=on, or Surrogate-Control content="ESI/1.0"

	// The lists are filled only when Store (or Private with a TTL).
	Tags        []string // from all TagHeaders: split, deduped, order kept
	VaryHeaders []string // from Vary: lower-cased, deduped, without accept-encoding
	VaryCookies []string // from LSVary cookie=NAME items: case kept, deduped
}

// Reasons a response is not stored (Decision.Reason), in the order Decide
// checks them, except that status is checked again after the governing
// header (LS without max-age stores only 200).
const (
	ReasonMethod        = "method"        // not GET or HEAD
	ReasonStatus        = "status"        // status never stored, or not 200 under LS without max-age
	ReasonVaryStar      = "vary-star"     // Vary: *
	ReasonNoStore       = "no-store"      // no-store in the governing header
	ReasonNoCache       = "no-cache"      // no-cache in the governing header (Cache-Control's: without validators to revalidate with)
	ReasonPrivate       = "private"       // private in the governing header
	ReasonAuthorization = "authorization" // request had Authorization, response not explicitly shared
	ReasonSetCookie     = "set-cookie"    // Set-Cookie and !CacheSetCookie
	ReasonNoTTL         = "no-ttl"        // no freshness information and no applicable DefaultTTL
	ReasonExpired       = "expired"       // no freshness left after Age (includes max-age=0, invalid Expires)
	ReasonCookie        = "cookie"        // Implicit lifetime, request with a session cookie (set by the caller)
)

// Decide decides whether and how the response described by in is stored.
// It allocates only for the Tags, VaryHeaders and VaryCookies of a stored
// response.
func Decide(in *Input) Decision {
	if reason := screen(in); reason != "" {
		return Decision{Reason: reason}
	}
	ls := ParseLSCacheControl(in.LSCacheControl)
	sc := ParseSurrogateControl(in.SurrogateControl)
	d := Decision{NoVary: ls.NoVary, ESI: ls.ESI || sc.ESI}
	r := governingRules(in, &ls, &sc)
	if d.Reason = refusal(in, &r); d.Reason != "" {
		d.Private = r.private
		if r.private && d.Reason == ReasonPrivate && (!in.SetCookie || in.CacheSetCookie) {
			privateLifetime(in, &r, &d)
		}
		return d
	}
	if d.TTL, d.Reason = r.ttl(in); d.Reason != "" && !r.revalidateAlways {
		return d
	}
	d.Store, d.Reason = true, ""
	if r.revalidateAlways {
		d.TTL = 0
	}
	d.MustRevalidate, d.Shared = r.noStale, r.shared
	d.Implicit = !r.hasLifetime && !r.revalidateAlways
	d.StaleWhileRevalidate, d.StaleIfError = r.stale(in.Grace)
	if in.Validators {
		d.Keep = keepWindow
	}
	d.Tags = tagsOf(in.TagHeaders)
	d.VaryHeaders = varyHeaders(in.Vary)
	d.VaryCookies = varyCookies(in.LSVary)
	return d
}

// privateLifetime fills in what a per-user cache needs of an LSCache
// private response: its lifetime, tags and vary. Store stays false: the
// shared cache must not keep it.
func privateLifetime(in *Input, r *rules, d *Decision) {
	ttl, reason := r.ttl(in)
	if reason != "" {
		return
	}
	d.TTL = ttl
	d.StaleWhileRevalidate, d.StaleIfError = r.stale(in.Grace)
	d.Tags = tagsOf(in.TagHeaders)
	d.VaryHeaders = varyHeaders(in.Vary)
	d.VaryCookies = varyCookies(in.LSVary)
}

// screen rejects what no header can make storable.
func screen(in *Input) string {
	switch {
	case in.Method != "GET" && in.Method != "HEAD":
		return ReasonMethod
	case !storableStatus(in.Status):
		return ReasonStatus
	case varyStar(in.Vary):
		return ReasonVaryStar
	}
	return ""
}

// refusal applies the governing header's prohibitions, then the request's.
func refusal(in *Input, r *rules) string {
	switch {
	case r.reason != "":
		return r.reason
	case r.only200 && in.Status != 200:
		return ReasonStatus
	case in.Authorization && !r.shared:
		return ReasonAuthorization
	case in.SetCookie && !in.CacheSetCookie:
		return ReasonSetCookie
	}
	return ""
}

// keepWindow is how long a copy with validators outlives its serving
// windows, to be revalidated (a 304 costs the origin no body).
const keepWindow = 10 * time.Minute

// storableStatus reports whether a response with this status may be stored
// given explicit freshness: any final status (RFC 9111 3), but a partial
// answer (the cache asks for whole bodies) and a 304 (not a
// representation).
func storableStatus(status int) bool {
	return status >= 200 && status <= 599 && status != 206 && status != 304
}

// defaultTTLStatus reports whether a response with this status and no
// freshness information may be stored for Input.DefaultTTL.
func defaultTTLStatus(status int) bool {
	switch status {
	case 200, 203, 300, 301, 308, 404, 410:
		return true
	}
	return false
}
