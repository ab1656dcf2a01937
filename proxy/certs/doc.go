// Package certs owns the TLS certificates of the client-facing listeners:
// a default pair and per-host pairs chosen by SNI (exact names and
// "*.example.com" wildcards), reloaded from disk when the files change,
// with OCSP responses fetched in the background and stapled. A reload
// builds a new table and swaps it atomically; a pair whose new files do
// not load keeps serving its old certificate. A config reload, which must
// load everything before it swaps anything, uses Stage and Commit
// instead: there a pair that does not load fails Stage.
//
// It owns no listener and speaks no HTTP except to OCSP responders. It
// must not import proxy, conf or h2: cmd hands it a Config and gives
// Store.TLSConfig to whichever listener terminates TLS.
package certs
