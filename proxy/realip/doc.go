// Package realip finds the client's address behind trusted proxies, as
// nginx's realip module does with set_real_ip_from, real_ip_header and
// real_ip_recursive on: when the connecting peer is a trusted proxy, the
// forwarding header's hops are walked from the right, past every trusted
// one, and the first that is not trusted is the client. A peer that is
// not trusted is the client itself, whatever its header claims.
//
// It parses addresses and walks header values (as the request's lines,
// in order) without allocating, so a cache hit can afford it. It owns no
// I/O and must not import proxy, fasthttp or conf.
package realip
