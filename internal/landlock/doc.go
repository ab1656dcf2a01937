// Package landlock confines what a process may read and run to a few
// trees with Linux Landlock, then runs a program in its place: the
// launcher ramjet starts php-cgi through, so that a script can open no
// file outside its site's docroot and the system's own trees, whatever
// symlinks a tenant swaps in (the kernel checks the file reached, not the
// path asked for).
//
// It owns the Landlock system calls and the launcher's argument format
// (Command builds it, Main reads it). It must not decide what a program
// may read: its caller (phppool) lists the trees.
package landlock
