// Package esi owns Edge Side Includes: it parses a page once, at store
// time, into literal segments and include points (Parse), and assembles a
// parsed page on a hit by fetching its fragments in parallel and writing
// everything in order (Assemble). It does no I/O of its own — fragments
// come from a Fetcher callback, which the proxy routes through its cache —
// and it imports nothing of ramjet's.
//
// # Markup
//
// Tag and element names are matched case-insensitively; attribute values
// may be double-quoted, single-quoted or unquoted; whitespace is free.
//
//   - <esi:include src=… [alt=…] [onerror="continue"] [cache-control=…]
//     [cache-tag=…] [as-var=…] [combine=…]/> (or "…>" optionally followed
//     by </esi:include>) becomes an include point. Attribute values are
//     HTML-entity-decoded (&amp; &quot; &lt; &gt; &apos; and numeric
//     &#38; &#038; &#x26; forms) and whitespace-trimmed.
//   - <esi:inline name=… …>body</esi:inline> (LiteSpeed) becomes an include
//     point with Src = name and Inline = body. The body is written in place
//     on assembly; the proxy may also store it as the fragment for name.
//   - <esi:remove>…</esi:remove> and <esi:comment …/> are removed.
//   - <!--esi … --> : the opener and "-->" are removed and the inner content
//     is processed as markup (ESI 1.0, Varnish).
//   - Ordinary HTML comments <!-- … --> are literal text and no markup is
//     recognised inside them (Varnish); so the LiteSpeed plugin's
//     "<!-- lscwp admin-bar -->" wrappers stay as they are.
//
// # Malformed markup (each case adds one to Stats.Malformed)
//
// Parse never fails, never panics and runs in time linear in the body: it
// is a hand-written scanner, every tag scan stops at the next '<', at 8 KiB
// per attribute value and at 16 KiB per tag, and a failed search for a
// closing tag is remembered so it is never repeated.
//
//   - A tag that cannot be parsed (unterminated, a '<' inside it or inside a
//     quoted value, a value over 8 KiB, a tag over 16 KiB, a stray
//     character) is passed through as literal text up to where the scanner
//     stopped, and scanning resumes there (at the '<' that stopped it).
//   - <esi:include> without src, and includes beyond maxIncludes: dropped.
//   - Unknown esi elements (<esi:try>, <esi:vars>, …): the tag alone is
//     dropped, content between tags is kept.
//   - Stray closing tags (</esi:remove> with no opener, …): dropped.
//   - <esi:remove> without </esi:remove>: the opening tag is dropped and the
//     content kept. A nested <esi:remove> is not paired: the removal ends at
//     the first </esi:remove> (and the outer closer becomes a stray one).
//   - <esi:inline> without </esi:inline>: the opening tag is dropped and the
//     content kept. Without a name, or beyond maxIncludes: the tags are
//     dropped and the body is kept as literal text.
//   - <!--esi without "-->": the opener is passed through as literal text and
//     what follows is processed as markup.
//
// # Assembly
//
// Assemble fetches all include points of one level in parallel (at most
// AssembleConfig.Parallel at once, each attempt bounded by Timeout), then
// writes the segments in order. A failed src falls back to alt; if both fail
// the block is empty, onerror or not — a page is never broken — and the
// error is in the Report. A fragment body containing markup is parsed and
// assembled at depth+1; beyond MaxDepth its text is written but its include
// points are empty blocks reported with ErrMaxDepth. One Assemble call
// fetches at most Document.Includes+256 fragments in all (ErrTooManyIncludes
// beyond). Assemble returns only after every fetch it started has returned,
// so a Fetcher must honour ctx.
package esi
