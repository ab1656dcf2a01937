package proxy

import "bytes"

// X-LiteSpeed-Cache is LiteSpeed's cache status, which the LiteSpeed
// Cache plugin's crawler reads (src/crawler.cls.php, _status_parse):
// "miss" is a miss, any other value a hit, and an answer without it puts
// the URL on the crawler's blocklist. A site that speaks the LSCache
// protocol (LSCacheHeader) gets it on every answer from a cache entry,
// as LiteSpeed sends it on the answers it caches, and on no other: an
// answer ramjet does not keep is one the crawler should not warm. It
// restates Cache-Status, which stays as it is.
var (
	hdrLiteSpeedCache = []byte("X-LiteSpeed-Cache") // LiteSpeed's spelling, set as it is
	lsHit             = []byte("hit")
	lsHitPrivate      = []byte("hit,private")
	lsMiss            = []byte("miss")
)

// lsCacheValue is the X-LiteSpeed-Cache value of an answer from a cache
// entry whose Cache-Status is status: "hit" when Cache-Status says hit
// ("hit,private" from the user's private cache), else "miss": this
// request, or the fill it waited on, stored or revalidated the entry.
func lsCacheValue(status []byte) []byte {
	switch {
	case bytes.Equal(status, csHitPrivate):
		return lsHitPrivate
	case bytes.HasPrefix(status, csHit):
		return lsHit
	}
	return lsMiss
}
