// Package apache reads an Apache httpd configuration (the main file and
// every file it includes, with `apache2 -S` saying which virtual hosts
// are in effect, where, and where ServerRoot and PidFile are), finds its
// <VirtualHost>s for package adoption, writes the edits that move them
// to loopback, and hands Apache's listening sockets to ramjet.
//
// It runs Apache's tool only to dump, test and reload gracefully.
package apache
