// Package proxy owns the request path: host routing, the cache lookup
// (the user's private copy first, then the shared one), serving hits,
// assembling ESI pages from their fragments, coalesced fills from the
// site's upstream, storing what the application marks cacheable, applying
// the purges origin responses and PURGE requests carry, and streaming
// everything else. The upstream is the origin pool (proxy/origin), or for
// a docroot site its proxy/docroot handler with the site's php-cgi pool
// (phppool), which the generation owns like the origin pool: kept across
// reloads when unchanged, drained when replaced.
//
// Every request — HTTP/1.1, HTTP/2 and HTTP/3 (ServeFastHTTP), an HTTP/2
// inline hit (ServeHit), an ESI fragment — runs one ordered list of
// stages, each in the file named after it (pipeline.go lists them):
//
//	client → admit → rewrite → purge → identity → key → lookup ─┐
//	┌───────────────────────────────────────────────────────────┘
//	├─ fresh ───────────────────────────────────────┐
//	└─ miss, stale, pass → guard → crawler → fill → respond → stats → log
//
// A stage added to the list applies to every entry. The list is compiled
// once per kind of request (pipeline.go): an inline request stops after
// lookup, a fresh hit answered and anything else declined, unchanged; a
// fragment skips client, purge, crawler, stats and log, and its respond
// hands the body to the page assembling it. Each stage keeps its part of the
// request in its own file, with its reset (request.go lists them); the
// one hand-off between stages is lookup's to fill.
//
// Per-site policy lives in a generation that Reload swaps atomically; a
// request keeps the generation it started with to its end, fragments
// included. generation.go holds its whole life: build (each site
// assembled by builder.site: state and cache, access log, upstream,
// .htaccess rules), start, swap, retire, and discard, the one undo of a
// generation that never served. The caches, the in-flight fills, the background refreshes
// and the open access log files (proxy/accesslog, one writer per path)
// belong to the Proxy and survive reloads; a generation holds the files
// its sites name until its last client request has logged.
//
// It must not import conf (cmd translates the file into Config) and does
// not handle signals.
package proxy
