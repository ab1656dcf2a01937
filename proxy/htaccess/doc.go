// Package htaccess reads Apache's per-directory configuration files and
// answers, for one request, what Apache would do with them: refuse it
// (access control, Basic auth), redirect it, rewrite it to another path
// (mod_rewrite), and what the answer carries (headers, expiry, types,
// error documents, environment for PHP), plus the LiteSpeed cache rules
// the LiteSpeed Cache plugin writes inside <IfModule LiteSpeed> and
// those LiteSpeed documents for applications without a plugin
// (CacheEnable, CacheDisable, CacheIgnoreCacheControl, %{ORG_REQ_URI}).
//
// A File is parsed once per version on disk (Tree caches it by size,
// modification time and inode, and stats each directory at most once per
// StatInterval), with FILE:LINE errors. Files merge from the document root
// down as Apache merges per-directory configs: a deeper file's rewrite
// rules replace its parent's unless RewriteOptions inherit; its
// Order/Allow/Deny replace the parent's whole (mod_access_compat has no
// merger); Require replaces the parent's (AuthMerging Off). Unknown
// directives are ignored with one warning per file, except access-control
// ones, which fail closed: a directory whose access rules ramjet cannot
// evaluate answers 403, never what they were meant to protect. So does a
// rewrite rule reading a variable ramjet does not know (Apache would
// expand it to ""): it is not applied, the request bypasses the cache
// (Cache.Undecided), and an [F] or [G] one refuses. So do the
// directives that switch PHP off for a script (Outcome.PHPOff): the
// docroot refuses it rather than run it or show its source.
//
// The proxy evaluates the requested URL's rules before its cache
// (Request.OneRound, as LiteSpeed's CacheLookup) through a memo
// (Recall/Remember) that keeps each decision for one StatInterval, and
// the docroot, for what it serves, every round through a second memo of
// whole outcomes (RecallServe/RememberServe), so a repeated request the
// cache passes runs no rule at all. Literal
// patterns are matched without the regex engine (matcher), and an
// evaluation that needs no back-reference (the stock WordPress and
// LiteSpeed Cache blocks) allocates nothing once its Outcome's buffers
// have grown. It does no network I/O; it reads the files it is given
// and stats paths under the root. It must not import proxy or conf.
package htaccess
