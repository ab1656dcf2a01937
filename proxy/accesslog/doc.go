// Package accesslog owns the access log: one line per client request,
// formatted into the caller's reusable buffer (Format.Append) and handed
// to a Writer, which copies it into a bounded buffer that its own
// goroutine writes to the file in batches. A request never waits for the
// disk: when the buffer is full the line is dropped and counted
// (Writer.Dropped), and formatting and handing over allocate nothing.
//
// Files keeps one Writer per path, shared by every site that names it and
// counted by the config generations that use it, so that a reload keeps
// the files it still names open and closes the others only when the
// generations using them let go of them (after draining). Reopen opens
// every file again at its path, for logrotate.
//
// It knows nothing of HTTP servers, sites or config files: proxy fills a
// Record per request, cmd maps the config onto Format and paths. It must
// not import proxy or conf.
package accesslog
