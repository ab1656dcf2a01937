package htaccess

import (
	"net/netip"
)

// Header reads a request header by name (fasthttp's RequestHeader has
// this method).
type Header interface {
	Peek(key string) []byte
}

// Request is what Eval reads of a request. The slices are only read,
// and only during Eval.
type Request struct {
	Method []byte
	// Path is the decoded URL path, starting with "/".
	Path []byte
	// Query is the query string as sent, without "?".
	Query []byte
	// Host is the Host header (with its port, if any).
	Host []byte
	// RequestLine is THE_REQUEST: "GET /a?b HTTP/1.1".
	RequestLine []byte
	Protocol    []byte
	Header      Header
	Client      netip.Addr
	ClientPort  int
	// Port is the port the client connected to (SERVER_PORT).
	Port  int
	HTTPS bool
	// OneRound evaluates the requested URL's rules only, as LiteSpeed's
	// CacheLookup does before the internal redirect they lead to: what
	// decides caching and refusal of the URL. The path it is rewritten
	// to is not walked again (Path says where it would go).
	OneRound bool
}

// Outcome is what Eval decided for a request. It is reused: Eval resets
// it, keeping its buffers, so that a request allocates nothing once the
// buffers have grown.
type Outcome struct {
	// Status, when not 0, is the answer: 403, 401 (with Realm), a
	// redirect (with Location), 410, 500 (Cause says why).
	Status   int
	Location []byte
	Realm    string
	// Cause names what decided a refusal or error, "FILE:LINE: …", for
	// the log; Err is the parse error behind a 500, if any.
	Cause string
	Err   error
	// Path and Query are what to serve: the request's, or what the
	// rules rewrote them to (Rewritten).
	Path, Query []byte
	Rewritten   bool
	// Proxy is a [P] rule's target URL ("" for none): the answer is that
	// URL's, fetched from an origin the configuration names.
	Proxy []byte
	// User is the authenticated user (REMOTE_USER), "" for none.
	User string
	// Mime is a rule's T= type; "" for none.
	Mime string
	// Cache is what the LiteSpeed cache rules said.
	Cache Cache

	env     []envVar
	cookies [][]byte // Set-Cookie values of CO= flags
	secs    []*section
	files   []*File // the chain of the last round, root first
	dirs    []int   // end of each directory in dirURL
	rounds  int

	dirURL   []byte // URL path of the deepest directory of the walk
	filename []byte // REQUEST_FILENAME
	pathInfo []byte
	base     []byte // the final path segment, for <Files>
	subject  []byte
	pathBuf  [2][]byte
	queryBuf [2][]byte
	scratch  []byte
	tmp      []byte
	caps     []int // the rule's captures, against subject
	condCaps []int // the last matched condition's, against condSrc
	condSrc  []byte
	loc      []byte
	proxy    bool
	uri      []byte // REQUEST_URI: the round's path
	args     []byte // QUERY_STRING as the rules have left it
	docRoot  string
	// noSlash: the walk ended on a directory asked for without its
	// trailing slash (mod_dir redirects it; the rules leave it alone).
	noSlash bool
	https   bool // the request came over TLS
	// What CacheEnable / CacheDisable said of the requested URL (1 on,
	// -1 off, 0 nothing) and CacheEnable's TTL; ruleVis: a rule's
	// E=Cache-Control said public or private.
	cachePub, cachePriv int8
	cacheTTL            int64
	ruleVis             bool
}

var httpsOn = []byte("on")

// Cache is what the LiteSpeed cache rules said about one request.
type Cache struct {
	// NoCache: neither served from the cache nor stored
	// (E=Cache-Control:no-cache, CacheLookup off).
	NoCache bool
	// Private asks for a private copy; TTL (seconds, 0 unset) a time to
	// keep the answer when the application says nothing.
	Private bool
	TTL     int64
	// Vary is the named variant ("ismobile", "ismobile+webp"), "" for
	// the default: it keys the cache and reaches the application as
	// LSCACHE_VARY_VALUE.
	Vary []byte
	// VaryCookies lists extra cookies that key the cache
	// (E="Cache-Vary:a,b"), comma-separated.
	VaryCookies []byte
	// DropQuery names query parameters left out of the key
	// (CacheKeyModify -qs:NAME).
	DropQuery []string
	// Enabled: TTL and Private are CacheEnable's, no rule's: the
	// response's own Cache-Control no-cache, no-store or private still
	// keeps it out of the cache, as LiteSpeed's "Ignore Response
	// Cache-Control" off does, unless IgnoreCacheControl.
	Enabled bool
	// Disabled: CacheDisable covers the URL and no rule turned caching
	// on: a response is stored only if its application asks for it
	// (X-LiteSpeed-Cache-Control).
	Disabled bool
	// IgnoreCacheControl: CacheIgnoreCacheControl on.
	IgnoreCacheControl bool
	// Set: some rule or directive said something.
	Set bool
	// Undecided, when not "", names the rule that read a variable
	// ramjet does not know ("FILE:LINE: …"): the request bypasses the
	// cache (NoCache) rather than be decided on an empty string.
	Undecided string
}

type envVar struct {
	name     string
	val      []byte
	redirect bool // set in an earlier round: PHP sees it as REDIRECT_name
	unset    bool
}

// Reset empties o, keeping its buffers, as Eval does before it decides.
func (o *Outcome) Reset() { o.reset() }

func (o *Outcome) reset() {
	o.Status, o.Location, o.Realm, o.Cause, o.Err, o.Proxy = 0, o.Location[:0], "", "", nil, o.Proxy[:0]
	o.Path, o.Query, o.Rewritten, o.User, o.Mime = nil, nil, false, "", ""
	o.Cache = Cache{Vary: o.Cache.Vary[:0], VaryCookies: o.Cache.VaryCookies[:0], DropQuery: o.Cache.DropQuery[:0]}
	o.env, o.cookies, o.secs, o.files, o.dirs, o.rounds = o.env[:0], o.cookies[:0], o.secs[:0], o.files[:0], o.dirs[:0], 0
	o.proxy = false
}

// setEnv sets (or unsets) a variable of the request's environment.
func (o *Outcome) setEnv(name string, val []byte, unset bool) {
	for i := range o.env {
		if e := &o.env[i]; e.name == name && !e.redirect {
			e.val, e.unset = append(e.val[:0], val...), unset
			return
		}
	}
	if len(o.env) < cap(o.env) {
		o.env = o.env[:len(o.env)+1]
		e := &o.env[len(o.env)-1]
		e.name, e.val, e.redirect, e.unset = name, append(e.val[:0], val...), false, unset
		return
	}
	o.env = append(o.env, envVar{name: name, val: append([]byte(nil), val...), unset: unset})
}

// lookupEnv is a variable set in this round, or in an earlier one under
// its REDIRECT_ name; HTTPS is "on" over TLS, as mod_ssl sets it.
func (o *Outcome) lookupEnv(name string) ([]byte, bool) {
	if o.https && name == "HTTPS" {
		return httpsOn, true
	}
	for i := len(o.env) - 1; i >= 0; i-- {
		e := &o.env[i]
		if e.redirect {
			if len(name) > 9 && name[:9] == "REDIRECT_" && e.name == name[9:] {
				return e.val, !e.unset
			}
			continue
		}
		if e.name == name {
			return e.val, !e.unset
		}
	}
	return nil, false
}

func (o *Outcome) has(name string) bool {
	_, ok := o.lookupEnv(name)
	return ok
}

// Env calls fn for each variable the request's environment gained, as
// PHP gets them: those of earlier rounds under REDIRECT_ names.
func (o *Outcome) Env(fn func(name string, value []byte)) {
	for i := range o.env {
		e := &o.env[i]
		if e.unset {
			continue
		}
		if e.redirect {
			fn("REDIRECT_"+e.name, e.val)
			continue
		}
		fn(e.name, e.val)
	}
}

// Cookies are the Set-Cookie values the rules' CO= flags made.
func (o *Outcome) Cookies() [][]byte { return o.cookies }

// Rounds is how many times the rules ran (1 + internal redirects).
func (o *Outcome) Rounds() int { return o.rounds }

// HostPort is SERVER_PORT as Apache with UseCanonicalName Off has it:
// the Host header's port, else the scheme's.
func HostPort(host []byte, https bool) int {
	h := hostOnly(host)
	if len(h) < len(host) && host[len(h)] == ':' {
		n := 0
		for _, c := range host[len(h)+1:] {
			if c < '0' || c > '9' || n > 65535 {
				return 0
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	if https {
		return 443
	}
	return 80
}

// Configured reports whether any .htaccess file applied to the request.
func (o *Outcome) Configured() bool {
	for _, f := range o.files {
		if f != nil {
			return true
		}
	}
	return false
}
