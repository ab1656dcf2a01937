// Package proxy owns the request path: host routing, the cache lookup
// (the user's private copy first, then the shared one), serving hits,
// assembling ESI pages from their fragments, coalesced fills from the
// origin, storing what the application marks cacheable, applying the
// purges origin responses and PURGE requests carry, and streaming
// everything else. What the cache cannot answer goes to the site's
// upstream: the origin pool (proxy/origin), or for a docroot site its
// proxy/docroot handler with the site's php-cgi pool (phppool), which the
// generation owns like the origin pool: kept across reloads when
// unchanged, drained when replaced.
//
// ServeFastHTTP reads as its steps: route, bypass?, key, lookup, serve a
// hit or fill a miss. Per-site policy lives in a generation that Reload
// swaps atomically; the caches, the in-flight fills and the background
// refreshes belong to the Proxy and survive reloads.
//
// It must not import conf (cmd translates the file into Config) and does
// not handle signals.
package proxy
