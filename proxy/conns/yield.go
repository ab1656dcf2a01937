package conns

import "runtime"

// yieldFirst is what an idle Read does before it looks at the socket:
// on every other request of a connection it lets the goroutines already
// waiting run first, and reports whether it did.
//
// After an answer the client's next request is not there yet, so the
// read after it finds the socket empty, waits in the netpoller and is
// woken: a wasted recvfrom, a park and a wake per keep-alive request. On
// a busy server the next request arrives while the other goroutines run,
// and the read after a yield finds it (recvfrom per request 2.00 → 1.01;
// CPU per 725 B hit −9 %, perf stat, wrk -c50 on one core).
//
// Not on every request: Go's scheduler polls the network only when its
// run queue is empty (or from sysmon, every 10 ms), and goroutines that
// always yield keep it from ever being empty. A connection whose read did
// wait then waited for sysmon: the 725 B hit's p99 went from 0.9 to 10 ms
// and wrk -c1000's p99.9 to 3× nginx fastcgi_cache's (bench/run). A
// connection that yields on one request reads at once on the next, so
// the run queue drains within two rounds and the network is polled as
// before; half the requests keep the saving. An idle server pays one trip
// through the scheduler per two requests, which it has time for.
func (c *Conn) yieldFirst() bool {
	c.yielded = !c.yielded
	if c.yielded {
		runtime.Gosched()
	}
	return c.yielded
}
