// Package phppool owns ramjet's FastCGI client for php-cgi workers: the
// record framing, name-value pair encoding, one keep-alive connection per
// worker that serves requests one after another (Conn.Do), and parsing the
// CGI response head (Status, Location, headers) from the start of STDOUT.
//
// It also owns the php-cgi processes (Pool): starting them as a user
// that is neither root nor ramjet's own (root, or a non-root ramjet with
// CAP_SETUID and CAP_SETGID; caps.go keeps ramjet's capabilities from
// reaching PHP), with only the environment the pool's config gives, idle suspend with
// SIGSTOP/SIGCONT, idle exit, recycling, killing requests that run too
// long, replacing dead workers, and graceful Shutdown for reloads. It does
// no HTTP routing and must not import proxy, purge or conf, and it does
// not handle signals; it signals only the php-cgi processes it started
// and their children.
//
// Pool (pool.go, acquire.go, do.go, supervise.go, worker.go) holds one
// keep-alive Conn per worker, on Unix sockets in a 0700 directory of the
// pool's. Two engines make the workers. The shared one (master.go, the
// default) runs one php-cgi -b master per pool with PHP_FCGI_CHILDREN=Max:
// its children fork after the opcache's shared memory exists, so they
// share one compiled copy of every script, as php-fpm's do; the pool
// connects to the master's socket and learns from the kernel which child
// accepted (peer.go: sock_diag and /proc/PID/fd), then signals that child
// through a pidfd (pidfd.go). The master forks a new child whenever one
// ends. The separate engine (separate.go) runs one php-cgi -b process per
// worker on its own socket, each with its own opcache. Either way the pool
// knows which process holds which request, and suspends only idle
// workers: php-cgi sends END_REQUEST after opcache released its locks.
// Idle workers are reused LIFO (warm caches); when none is idle and
// Max processes run, Do calls queue FIFO and a finishing worker is handed
// to the oldest, up to QueueWait (then ErrBusy). After a request a worker
// is retired when it served MaxRequests, its own memory grew past MaxRSS, broke its Conn
// or ran past RequestTimeout (SIGKILL at once). A request whose worker
// failed before sending a byte is retried once on another worker when
// nginx's fastcgi_next_upstream would (no body consumed, method not POST,
// LOCK or PATCH unless sending failed); otherwise it fails with
// ErrWorkerFailed. Counters and the resume latency histogram (Stats) are
// atomics, cheap on the request path.
//
// A Conn never buffers a whole response: Pool.Begin returns once the
// first STDOUT record arrived and the caller pulls the rest (Response.Next)
// on its own goroutine as the worker writes it — no goroutine of the
// pool's per request, no copy into a pipe — and Do is Begin with the
// output written to a writer. The request body is streamed in records of
// at most 65535 bytes. The socket is read and written with raw system
// calls (internal/rawsock). Any protocol or I/O error marks the Conn broken
// (Broken) so a pool never hands it another request.
package phppool
