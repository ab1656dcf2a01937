// Package policy owns the caching decision for one origin response: from the
// response's headers and the request that caused it, whether it is stored,
// for how long, how long it may be served stale, and with which tags and
// vary. It does no I/O and must not import fasthttp or any ramjet package.
//
// One header governs a response, the most specific one present:
//
//   - X-LiteSpeed-Cache-Control, read as OpenLiteSpeed does, is the whole
//     policy: Surrogate-Control and Cache-Control are then ignored, except
//     the Surrogate-Control content="ESI/1.0" flag. Without max-age or
//     s-maxage only status 200 is stored, for Input.DefaultTTL.
//   - Else a targeted field (RFC 9213: the configured own name, then
//     CDN-Cache-Control), valid as a Structured Field Dictionary, read
//     with Cache-Control's directives in place of Cache-Control and
//     Expires.
//   - Else Surrogate-Control max-age=N[+M]: N is the lifetime and M the
//     stale-if-error window. Of Cache-Control only private still forbids
//     storing (its no-cache and no-store are taken as meant for browsers).
//   - Else Cache-Control read as a shared cache does (RFC 9111), then
//     Expires minus Date, then Input.DefaultTTL for the statuses that are
//     heuristically cacheable.
//
// Input.Grace (an operator's opt-in beyond RFC 9111, 0 by default) fills
// the stale windows the response leaves open, except after
// must-revalidate, proxy-revalidate or s-maxage, which allow no stale at
// all (Decision.MustRevalidate; s-maxage carries proxy-revalidate for a
// shared cache, RFC 9111 5.2.2.10). Cache-Control no-cache with a
// validator is stored with no freshness and revalidated on every use. A
// response with validators is kept Decision.Keep past its windows to be
// revalidated. Numbers above a year are clamped to a year; invalid ones
// are ignored.
package policy
