// Package testbed starts the real processes ramjet's end-to-end tests run
// against — the ramjet binary built from this repository, nginx and
// Apache as origins, php-fpm, php-cgi, redis-server, MariaDB and a
// WordPress tree —
// each on ephemeral 127.0.0.1 ports and in private temporary directories,
// each stopped by t.Cleanup. It also owns what those tests share around
// them: free ports, waiting for a listener or a condition with a deadline,
// the captured output of every child (to wait for a log line), small
// readers of /proc (RSS, process state, sockets and TCP connection
// states, children), and wrk runs counted (Wrk).
//
// It is test support only: production packages must not import it, and it
// imports no ramjet package (it talks to ramjet through its binary, its
// ports and its output). It never binds anything but 127.0.0.1, uses no
// fixed port or path, and touches nothing outside the temporary
// directories it creates, except reading Debian's installed files
// (/usr/share/wordpress, /etc/nginx/fastcgi_params, Apache's modules) and
// the repository's conf/apache-origin.conf. A missing Debian
// package fails the test with the package to install; nothing is skipped.
//
// Packages that build ramjet (StartRamjet, RunRamjet) run their tests
// through Main, which removes the build directory at the end.
package testbed
