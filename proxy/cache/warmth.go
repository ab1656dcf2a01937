package cache

// A body sent from a file (Section) is read by the kernel from its pages
// in the page cache, or from the disk when they left it. The connection's
// sendfile is raw, unseen by Go's scheduler, when the file is warm, so
// that the hot hit pays no scheduler work; a file that may be cold is
// sent with an ordinary system call, which the scheduler sees, so that
// while the kernel reads the disk it hands the thread's P to another
// thread rather than stall every goroutine on it (with GOMAXPROCS 1 or 2,
// the whole server). Which is which must cost nothing per hit: no system
// call (mincore, cachestat) on the hot path, so the lend's owner judges
// by when the file was last sent whole.

// Warmth is a lend's Owner that knows whether its file's pages are
// likely in the page cache. Without it, a file is sent as cold.
type Warmth interface {
	// Warm reports whether a body of the file was sent whole lately.
	Warm() bool
	// Sent tells that a body of the file was sent whole.
	Sent()
}
