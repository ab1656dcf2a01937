package cache

// Status is what may be done with an entry at a given time, purges
// included.
type Status uint8

const (
	// Gone: never served (expired past every window, or hard-purged).
	Gone Status = iota
	// Fresh: served as a hit.
	Fresh
	// Stale: served while one request revalidates it.
	Stale
	// ErrorOnly: served only if the origin fails (stale-if-error).
	ErrorOnly
	// Purged: hard-purged; never served.
	Purged
	// Revalidate: not servable until the origin validates it (a 304
	// refreshes it): past every serving window but kept, or a
	// must-revalidate entry that is not fresh.
	Revalidate
)

// Status says how e may be served at now. A soft purge makes an entry
// stale at once but still servable while one request refreshes it, for
// as long as it would have been servable without the purge.
func (c *Cache) Status(e *Entry, now int64) Status {
	hard, soft := c.purged(e, now)
	if hard {
		return Purged
	}
	fresh, stale := e.FreshUntil, e.StaleUntil
	if soft {
		fresh, stale = 0, max(stale, e.FreshUntil)
	}
	switch {
	case now < fresh:
		return Fresh
	case e.MustRevalidate:
		if now < max(e.KeepUntil, e.FreshUntil) {
			return Revalidate
		}
	case now < stale:
		return Stale
	case now < e.ErrorUntil:
		return ErrorOnly
	case now < e.KeepUntil:
		return Revalidate
	}
	return Gone
}

// purged reports whether a hard or soft purge happened after e's fill
// began, as of now. It reads one atomic per tag and allocates nothing.
func (c *Cache) purged(e *Entry, now int64) (hard, soft bool) {
	born := e.born()
	if c.allHard.Load() >= born {
		return true, false
	}
	if g := c.gap.Load(); g != nil && g.at >= born {
		if now >= g.deadline(born) {
			return true, false
		}
		soft = true
	}
	soft = soft || c.allSoft.Load() >= born
	for _, t := range e.tags {
		if t.hard.Load() >= born {
			return true, false
		}
		soft = soft || t.soft.Load() >= born
	}
	return false, soft
}
