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
//     on assembly; the proxy may also keep it for the includes of name in
//     the same page.
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
// closing tag is remembered so it is never repeated. The page is always
// served; broken markup is dropped, never passed through, so that no
// "<esi:" reaches a client (outside HTML comments, which are text) and no
// half tag (an open quote, an open comment) swallows the rest of the page
// in the browser. Varnish
// (cache_esi_parse.c) is the model; where ramjet differs it says so.
//
//   - A tag that cannot be parsed (a missing '>', a '<' inside it or inside
//     a quoted value, an unbalanced quote, "/" not followed by ">", a
//     stray character such as a quote where a name should be, a value over
//     8 KiB, a tag over 16 KiB, "<esi:" without a name) is dropped from its
//     '<' through the next '>' after where the scanner gave up, as Varnish
//     drops it ("TAGERROR"); but never past the next '<', which may start a
//     good tag Varnish would lose too. A body that ends inside a tag loses
//     the tag to its end, as in Varnish.
//   - Attribute values may be unquoted (src=/f): taken up to a space or
//     '>' ("src=/f/>" self-closes), as Varnish takes them. An attribute
//     without a value (src, src=) is empty.
//   - <esi:include> without a (non-empty) src, and includes beyond
//     maxIncludes: dropped (Varnish: "lacks src attr"). Of several src
//     the first is taken (Varnish drops such a tag).
//   - Unknown esi elements (<esi:try>, <esi:vars>, <esi:bogus x=1>, …):
//     the tag alone is dropped, content between tags is kept (Varnish:
//     "<esi:bogus> element").
//   - Stray closing tags (</esi:remove> with no opener, </esi:include>,
//     </esi:bogus>, …): dropped; broken ones by the rule above.
//   - <esi:remove> without </esi:remove>: the opening tag is dropped and the
//     content kept (Varnish removes everything to the end of the page: a
//     typo should not blank a page, and the block's content is what a
//     client without ESI would see anyway). When one has no end, no later
//     one in the same region has either: the end is looked for once. A
//     nested <esi:remove> is not paired: the removal ends at the first
//     </esi:remove> (and the outer closer becomes a stray one), as in
//     Varnish.
//   - CDATA sections (<![CDATA[ … ]]>) inside <esi:remove> or <esi:inline>
//     are opaque: a closing tag inside one does not end the block (one
//     without "]]>" runs to the end of the region, so the block has no
//     end). Outside those blocks markup inside CDATA is processed, unlike
//     Varnish: WordPress wraps the script data where the LiteSpeed plugin
//     puts its nonce includes in CDATA.
//   - <esi:inline> without </esi:inline>: the opening tag is dropped and the
//     content kept. Without a name, or beyond maxIncludes: the opening tag
//     is dropped and the body is kept as markup (its closer is then a
//     stray one).
//   - <!--esi without "-->": the opener is dropped and what follows is
//     processed as markup (as Varnish does); a <!--esi inside a <!--esi
//     block is dropped too (Varnish: nested). Either left in would open an
//     HTML comment hiding the rest of the page.
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
