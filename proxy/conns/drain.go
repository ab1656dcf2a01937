package conns

import "time"

// A server that stops (a shutdown, the old process of an upgrade, the
// rollback of an adoption) closes its listening socket: connections
// still queued in the kernel move to the process that takes over (the
// socket passed on, or SO_REUSEPORT's group with tcp_migrate_req). But
// a connection this process accepted is its own to answer, and a client
// sends its first request a little after its connect returns: under
// load, after the server parked the connection for want of bytes.
// Closing such a connection loses a request nobody retries (a client
// retries only on a connection that served before). So Close gives the
// connections that have sent nothing yet DrainGrace to be heard, parked
// or not, and serves them through Accept as usual; the answers then
// close their connections (the server's stopping). Those parked after a
// first answer are closed at once, as nginx closes its idle keep-alive
// connections on a graceful stop.
//
// The grace is short: a client sends its request as soon as it
// connects; one silent for a second is a preconnection its browser opens
// again elsewhere (net/http and fasthttp give these 5 s; nginx none).
const drainGrace = time.Second

// heard marks c as having sent bytes (or closed): it no longer holds up
// a drain. Any goroutine may call it.
func (c *Conn) heard() {
	if c.unheard.Load() && c.unheard.CompareAndSwap(true, false) {
		if c.l.unheard.Add(-1) == 0 {
			select {
			case c.l.allHeard <- struct{}{}:
			default:
			}
		}
	}
}

// drain waits, up to DrainGrace, until every connection that had sent
// nothing as the listener closed has been heard; the parked ones that
// had are closed now (lot.drain).
func (l *Listener) drain() {
	l.lot.drain()
	t := time.NewTimer(l.cfg.DrainGrace)
	defer t.Stop()
	for l.unheard.Load() > 0 {
		select {
		case <-l.allHeard:
		case <-t.C:
			return
		}
	}
}
