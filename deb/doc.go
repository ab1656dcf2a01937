// Package deb is ramjet's Debian package: deb/build stages the binary,
// /etc/ramjet/ramjet.yaml (a conffile: conf/ramjet.example.yaml), the
// systemd unit (conf/ramjet.service), the logrotate snippet and the
// maintainer scripts (postinst, prerm, postrm: the ramjet system user,
// /var/log/ramjet, enable and start) and builds the .deb with dpkg-deb;
// `make deb` runs it.
//
// The package has no Go code of its own. Its test builds the .deb and
// installs, starts, reloads, stops, removes and purges it with dpkg and a
// real systemd inside deb/box, a throwaway system in namespaces on an
// overlay of this machine's root, so that nothing on the machine itself
// is installed or changed.
package deb
