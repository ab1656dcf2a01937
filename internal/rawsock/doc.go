// Package rawsock owns reading and writing a non-blocking socket with raw
// system calls, waiting in Go's netpoller when it is not ready (deadlines
// and Close act as on the net.Conn). It must not import anything of
// ramjet's.
//
// Why: the socket is non-blocking, so read and write return at once; made
// as ordinary system calls they tell Go's scheduler they might block.
// With the server on one core beside the processes it talks to (php-cgi,
// the load generator's loopback peer), a write to the peer wakes it and
// the kernel runs it before the write returns: the scheduler's monitor
// then wakes for the call (entersyscall), sees a P stuck in it, hands the
// P to another thread and keeps waking every 20 µs — a tenth of ramjet's
// CPU per PHP request, and two context switches per call on a busy core.
// Built with the race detector, the calls are package syscall's (race.go),
// which the detector needs to see the order that I/O gives.
package rawsock
