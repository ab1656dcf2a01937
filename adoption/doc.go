// Package adoption puts ramjet in front of a host's existing nginx or
// Apache: from the sites their configuration declares (read by
// adoption/nginx and adoption/apache) it writes a ramjet configuration
// with one hosts entry per site, a token file per site, and the edits
// that move the web server to loopback ports; it applies them in an
// order that refuses no request, keeps a backup, and rolls back.
//
// adoption never reads ramjet's own configuration schema (package conf):
// it writes YAML and leaves checking it to the caller (ramjet check).
package adoption
