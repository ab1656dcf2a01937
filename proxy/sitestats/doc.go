// Package sitestats owns what a site's owner reads about the cache: its
// counters over the last minute, hour and day, and the URLs it answered
// without caching, with the reason. It counts nothing on the request
// path itself: the proxy's per-site counters are read once a second
// (Site.Sample) into rings of snapshots, and a window is the counters now
// minus the snapshot taken at its start. So a hit costs nothing more than
// the counters it already increments. The URL lists are bounded
// (Space-Saving: a new URL on a full list takes the place of the least
// counted one); requests that went upstream uncached add to one, those
// the WAF stopped to another, so that a flood of attacks, which costs a
// client nothing upstream, cannot push out what the site's owner can fix.
//
// The package does no I/O and reads no clock: every method takes the time.
package sitestats
