// Package nginx reads an nginx configuration as `nginx -T` dumped it (the
// main file and every file it includes, as nginx read them), finds its
// server blocks for package adoption, and writes the edits that move
// their listeners to loopback.
//
// It runs nginx only to dump and test a configuration; it never reloads
// or stops it (the caller does, in the order it chooses).
package nginx
