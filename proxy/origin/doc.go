// Package origin owns the connections to the origin servers: one pooled
// keep-alive fasthttp client per server, connect/header/body deadlines,
// passive and active health checks, and failover between servers.
//
// It knows nothing about caching and must not import proxy, purge or conf.
package origin
