package proxy

import "bytes"

// X-LiteSpeed-Cache is LiteSpeed's cache status, which the LiteSpeed
// Cache plugin's crawler reads (src/crawler.cls.php, _status_parse):
// "miss" is a miss, any other value a hit, and an answer without it puts
// the URL on the crawler's blocklist. A site that speaks the LSCache
// protocol (LSCacheHeader) gets it on the answers that come from the
// cache or went into it, as LiteSpeed sends it on the answers it caches,
// and on no other: an answer ramjet does not keep is one the crawler
// should not warm. It restates Cache-Status, which stays as it is.
var (
	hdrLiteSpeedCache = []byte("X-LiteSpeed-Cache") // LiteSpeed's spelling, set as it is
	lsHit             = []byte("hit")
	lsHitPrivate      = []byte("hit,private")
	lsMiss            = []byte("miss")
)

// lsCacheValue is the X-LiteSpeed-Cache value of an answer whose
// Cache-Status is status: "hit" when Cache-Status says hit ("hit,private"
// from the user's private cache), "miss" when this request, or the fill
// it waited on, stored or revalidated the entry, nil for an answer the
// cache neither gave nor kept (a pass, an uncacheable or too large one).
func lsCacheValue(status []byte) []byte {
	if bytes.Equal(status, csHit) {
		return lsHit // a fresh hit, nearly every answer: no parse
	}
	var hit, private, kept bool
	for rest := status; len(rest) > 0; {
		var p []byte
		p, rest = cutItem(rest, ';')
		switch p = bytes.TrimSpace(p); string(p) {
		case "hit":
			hit = true
		case "detail=private":
			private = true
		case "stored", "collapsed", "fwd-status=304":
			kept = true
		}
	}
	switch {
	case hit && private:
		return lsHitPrivate
	case hit:
		return lsHit
	case kept:
		return lsMiss
	}
	return nil
}
