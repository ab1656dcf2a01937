// Package percent owns the percent-encoding of URL paths (RFC 3986
// 2.1): reading one %XX escape, decoding a path the way Apache does
// before it matches an internal redirect, and escaping one the way its
// ap_escape_uri does. Cache keys and .htaccess rules both read paths
// through it so that they agree on what an escape is. It knows nothing
// of requests, caches or rules.
package percent
