// Package conns owns a client listener's connections from accept to
// close: the accept loop (which backs off when file descriptors run out
// instead of spinning or giving up), the limits on open connections
// overall and per client address (refused with a short HTTP answer on a
// plain listener, counted), the parking of idle keep-alive
// connections, and what a closing listener still serves: the
// connections that have sent nothing yet get a second for their first
// request (drain.go).
//
// A parked connection costs neither a goroutine nor buffers, and on a
// plain TCP socket no net.Conn either (detach_linux.go): its socket
// sits in an epoll set that one poller goroutine (the Listener's) waits
// on through Go's own netpoller, and when it becomes readable the
// Listener's Accept hands it out again, to be served by the same server
// from its first byte. What the server must do for that is small: tell a
// Conn when it has answered a request and waits for the next (Idle), and
// treat the io.EOF a waiting Read returns as the end of the connection,
// whose Close parks it. Everything else about HTTP stays the server's.
//
// It must not import proxy, fasthttp or conf.
package conns
