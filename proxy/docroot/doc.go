// Package docroot serves a site from a directory, as a web server in
// front of PHP would: static files (validators, ranges, index files) and
// .php scripts run by a php-cgi pool over FastCGI, with the CGI variables
// nginx's fastcgi_params sends, and a front controller like nginx's
// try_files $uri $uri/ /index.php?$args.
//
// It owns the mapping from a request path to a file and its confinement:
// a script or file always resolves inside the docroot (no "..", no
// symlink escape unless allowed), only existing files ending in ".php" are
// executed, and dotfiles are denied. Files, scripts and .htaccess files
// are opened beneath a handle on the docroot (openat2 RESOLVE_BENEATH,
// beneath.go) that the Handler holds until Close: what a lookup found is
// never opened again by its name alone.
//
// Handler has the origin's shape (Do(req, resp)), so the proxy caches,
// coalesces and assembles ESI over it unchanged. It must not import proxy
// or conf; it does not own the PHP workers (phppool does) or the cache.
//
// No worker waits on a client: a request body is read whole before a
// worker is taken (body.go), and output past 1 MiB goes through a spool
// (spool.go) that frees the worker when the script ends.
package docroot
