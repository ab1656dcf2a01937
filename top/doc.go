// Package top is the live view of `ramjet top`, as varnishstat and
// varnishtop are for Varnish: once a second it reads a node's admin API
// (GET /stats for the sites, /php/status for the PHP pools, /metrics for
// the client connections) and draws, in a terminal of any width from 80
// columns, each site's requests per second, hit ratio, upstream latency,
// errors and WAF blocks, sorted by a key the user picks, then the PHP
// pools and the connections. It draws with plain ANSI sequences (no
// terminal library beyond golang.org/x/term in cmd, which sets raw mode),
// so it works over ssh in any terminal.
//
// It owns no terminal state: the caller sets raw mode, feeds it the keys
// and gives it the size.
package top
