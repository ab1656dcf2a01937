package policy

// LSCacheControl is a parsed X-LiteSpeed-Cache-Control response header.
type LSCacheControl struct {
	Present, NoCache, NoStore, Public, Private, Shared, NoVary, ESI bool

	MaxAge, SMaxAge, MaxStale          int // seconds
	HasMaxAge, HasSMaxAge, HasMaxStale bool
}

// lsDirectives are the directives OpenLiteSpeed recognises. None is a prefix
// of another, so at most one matches an item.
var lsDirectives = [...]string{
	"no-cache", "no-store", "max-age", "max-stale", "min-fresh",
	"no-transform", "only-if-cached", "public", "private", "must-revalidate",
	"proxy-revalidate", "s-maxage", "esi", "no-vary", "set-blank", "shared",
	"no-autoflush",
}

// ParseLSCacheControl parses b as OpenLiteSpeed's CacheCtrl::parse does:
// comma-separated items, each matched case-insensitively by prefix against
// the 17 directives, applied left to right. max-age and s-maxage make the
// response public and clear no-cache and no-store; max-age is ignored once
// s-maxage was seen; public clears private; numbers are leading digits
// after spaces, '=' and '"'. Later values overwrite earlier ones.
func ParseLSCacheControl(b []byte) LSCacheControl {
	var c LSCacheControl
	for i := 0; i < len(b); {
		start, end, next := nextItem(b, i)
		i = next
		if start < end {
			c.Present = true
			c.apply(b[start:end])
		}
	}
	return c
}

func (c *LSCacheControl) apply(item []byte) {
	d := matchLSDirective(item)
	v := item[len(d):]
	switch d {
	case "no-cache":
		c.NoCache = true
	case "no-store":
		c.NoStore = true
	case "public":
		c.Public, c.Private = true, false
	case "private":
		c.Private = true
	case "shared":
		c.Shared = true
	case "no-vary":
		c.NoVary = true
	case "esi":
		c.applyESI(v)
	case "max-stale":
		c.MaxStale, c.HasMaxStale = pickLS(v, c.MaxStale, c.HasMaxStale)
	case "max-age":
		if !c.HasSMaxAge {
			c.MaxAge, c.HasMaxAge = c.pickAge(v, c.MaxAge, c.HasMaxAge)
		}
	case "s-maxage":
		c.SMaxAge, c.HasSMaxAge = c.pickAge(v, c.SMaxAge, c.HasSMaxAge)
	}
}

func matchLSDirective(item []byte) string {
	for _, d := range lsDirectives {
		if hasPrefixFold(item, d) {
			return d
		}
	}
	return ""
}

func (c *LSCacheControl) applyESI(v []byte) {
	v = skipLSValuePrefix(v)
	switch {
	case hasPrefixFold(v, "on"):
		c.ESI = true
	case hasPrefixFold(v, "off"):
		c.ESI = false
	}
}

// pickAge parses a max-age or s-maxage value; a valid one makes the
// response public and clears no-cache and no-store.
func (c *LSCacheControl) pickAge(v []byte, old int, had bool) (int, bool) {
	n, ok := leadingSeconds(v)
	if !ok {
		return old, had
	}
	c.Public, c.NoCache, c.NoStore = true, false, false
	return n, true
}

// pickLS returns the number in v, or the old value when v has none.
func pickLS(v []byte, old int, had bool) (int, bool) {
	if n, ok := leadingSeconds(v); ok {
		return n, true
	}
	return old, had
}
