// Package proxy owns the request path: host routing, the cache lookup
// (the user's private copy first, then the shared one), serving hits,
// assembling ESI pages from their fragments, coalesced fills from the
// origin, storing what the application marks cacheable, applying the
// purges origin responses and PURGE requests carry, and streaming
// everything else.
//
// ServeFastHTTP reads as its steps: route, bypass?, key, lookup, serve a
// hit or fill a miss. Per-site policy lives in a generation that Reload
// swaps atomically; the caches, the in-flight fills and the background
// refreshes belong to the Proxy and survive reloads.
//
// It must not import conf (cmd translates the file into Config) and does
// not handle signals.
package proxy
