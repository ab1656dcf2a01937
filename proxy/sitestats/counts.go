package sitestats

import "time"

// Counts are a site's cumulative counters at one moment, or their
// difference over a window (Sub).
type Counts struct {
	Requests   uint64 // client requests answered
	Hits       uint64 // answered from the cache (fresh, stale, private)
	Misses     uint64 // fetched to be stored
	Passes     uint64 // forwarded uncached
	Purges     uint64 // purge commands scoped to the site
	WAFBlocked uint64 // requests and responses the WAF stopped
	Errors     uint64 // answers with a 5xx status
	// Origin counts the requests the upstream answered and OriginTime
	// sums how long it took them, until the response header.
	Origin     uint64
	OriginTime time.Duration
}

// Sub is c minus base: what was counted between the two.
func (c Counts) Sub(base Counts) Counts {
	return Counts{
		Requests: c.Requests - base.Requests, Hits: c.Hits - base.Hits, Misses: c.Misses - base.Misses,
		Passes: c.Passes - base.Passes, Purges: c.Purges - base.Purges, WAFBlocked: c.WAFBlocked - base.WAFBlocked,
		Errors: c.Errors - base.Errors, Origin: c.Origin - base.Origin, OriginTime: c.OriginTime - base.OriginTime,
	}
}

// HitRatio is the share of the requests that the cache answered: 0 when
// there were none.
func (c Counts) HitRatio() float64 {
	if c.Requests == 0 {
		return 0
	}
	return float64(c.Hits) / float64(c.Requests)
}

// OriginMean is the mean upstream time of the requests that went there:
// 0 when none did.
func (c Counts) OriginMean() time.Duration {
	if c.Origin == 0 {
		return 0
	}
	return c.OriginTime / time.Duration(c.Origin)
}
