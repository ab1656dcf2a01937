package policy

// CacheControl is a parsed Cache-Control response header (RFC 9111 5.2.2,
// RFC 5861). Numbers are seconds.
type CacheControl struct {
	NoStore, NoCache, Private, Public, MustRevalidate, ProxyRevalidate bool

	MaxAge, SMaxAge, StaleWhileRevalidate, StaleIfError int
	HasMaxAge, HasSMaxAge, HasSWR, HasSIE               bool
}

// ParseCacheControl parses b: comma-separated directives, names matched
// case-insensitively, quoted strings honoured. For a repeated numeric
// directive the first valid value counts; invalid values (negative,
// fractional, garbage) are ignored. The qualified forms private="…" and
// no-cache="…" count as unqualified, as most caches treat them.
func ParseCacheControl(b []byte) CacheControl {
	var c CacheControl
	for i := 0; i < len(b); {
		var name, value []byte
		name, value, i = nextDirective(b, i)
		c.apply(name, value)
	}
	return c
}

func (c *CacheControl) apply(name, v []byte) {
	switch {
	case eqFold(name, "no-store"):
		c.NoStore = true
	case eqFold(name, "no-cache"):
		c.NoCache = true
	case eqFold(name, "private"):
		c.Private = true
	case eqFold(name, "public"):
		c.Public = true
	case eqFold(name, "must-revalidate"):
		c.MustRevalidate = true
	case eqFold(name, "proxy-revalidate"):
		c.ProxyRevalidate = true
	case eqFold(name, "max-age"):
		c.MaxAge, c.HasMaxAge = pickFirst(v, c.MaxAge, c.HasMaxAge)
	case eqFold(name, "s-maxage"):
		c.SMaxAge, c.HasSMaxAge = pickFirst(v, c.SMaxAge, c.HasSMaxAge)
	case eqFold(name, "stale-while-revalidate"):
		c.StaleWhileRevalidate, c.HasSWR = pickFirst(v, c.StaleWhileRevalidate, c.HasSWR)
	case eqFold(name, "stale-if-error"):
		c.StaleIfError, c.HasSIE = pickFirst(v, c.StaleIfError, c.HasSIE)
	}
}

// pickFirst keeps an earlier valid value, else takes v if it is valid.
func pickFirst(v []byte, old int, had bool) (int, bool) {
	if had {
		return old, had
	}
	return parseSeconds(v)
}
