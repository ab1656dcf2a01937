// Package phppool owns ramjet's FastCGI client for php-cgi workers: the
// record framing, name-value pair encoding, one keep-alive connection per
// worker that serves requests one after another (Conn.Do), and parsing the
// CGI response head (Status, Location, headers) from the start of STDOUT.
//
// It also owns the php-cgi processes (Pool): spawning, idle suspend with
// SIGSTOP/SIGCONT, recycling and replacing workers. It does no HTTP routing
// and must not import proxy, purge or conf, and it does not handle signals.
//
// Pool (pool.go, worker.go) is that process manager: one php-cgi -b
// process per worker on its own loopback port with one Conn each, LIFO
// reuse, SIGSTOP/SIGCONT idle suspend, recycle after MaxRequests, and
// ErrBusy after QueueWait; it signals only its own child processes.
//
// A Conn never buffers a whole response: STDOUT records are written to the
// caller's writer as they arrive, and the request body is streamed in
// records of at most 65535 bytes. Any protocol or I/O error marks the Conn
// broken (Broken) so a pool never hands it another request.
package phppool
