// Package wpsite finds the WordPress installs of a host and turns page
// caching on and off in them: `ramjet wp scan|enable|disable`.
//
// An install is a directory holding wp-includes/version.php with a
// wp-config.php beside it or in its parent (what LiteSpeed's lscmctl
// scan looks for); its owner is the uid owning the directory. Inside an
// install everything runs as that owner, never as root: a small PHP
// script (wp.php, embedded) is run by php-cli with the owner's uid, gid
// and groups; it loads wp-load.php and installs, activates and
// configures the cache plugin with WordPress's own functions, so every
// file it creates belongs to the owner and no WP-CLI is needed.
//
// The cache plugin is ramjet's companion (ramjet-cache, copied from the
// packaged /usr/share/ramjet/wordpress) given the site's admin token, or,
// when the stock LiteSpeed Cache plugin is the active one, that plugin
// with its cache switched on. What enable changed is remembered in the
// install's ramjet_wp_state option, which disable reads to put back
// exactly what was there. A flag file (.ramjet_flag, or LiteSpeed's
// .litespeed_flag) in the install opts it out of enable.
//
// The package reads the host's files and runs PHP; it does not read
// ramjet's configuration (cmd maps hosts[] to Sites) and never writes
// inside an install itself.
package wpsite
