package conns

// readLate reads what arrived before the linger deadline that fired, on
// a connection that is about to park: on a busy core the scheduler runs
// expired timers before it polls the network, so the deadline of a
// connection whose next request waits in its socket can fire first, and
// parking it would cost a park and a wake (a dozen system calls, and the
// request's wait in the lot) for a client that never paused. A request
// found here is served on, under the deadline the server asked for, and
// the connection's linger doubles (as after a park it woke from soon):
// this core is slower to get back to its connections than the linger.
// Nothing there (0, nil): park. A connection under a wrapper (a PROXY
// header's, no raw socket) parks as before.
func (c *Conn) readLate(p []byte) (int, error) {
	if c.raw == nil {
		return 0, nil
	}
	n, err := c.raw.ReadNow(p)
	if n == 0 {
		return 0, err
	}
	c.l.lateReads.Add(1)
	c.linger = min(2*c.linger, c.l.cfg.MaxLinger)
	if derr := c.armRead(c.parkBy); derr != nil {
		return n, derr
	}
	return n, nil
}
