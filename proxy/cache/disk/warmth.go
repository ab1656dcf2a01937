package disk

import (
	"math"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// A held file counts as warm, its pages in the page cache, when a body of
// it was sent whole lately (cache.Warmth): its sendfile is then raw, else
// an ordinary system call that the scheduler sees while the kernel reads
// the disk. Lately is told without a clock read or a system call on the
// hit: by the time of the file's last check (held.checked, which every
// lend brings to within Config.Recheck of now), recorded when a send
// ends. Warm means that such a send ended within the last two or three
// rechecks (2–3 s by default). A file opened (its first lend), not sent
// since, or idle longer, is cold, and so is every answer lent it while
// the first one's sendfile brings its pages back: they would wait for
// the same pages. Pages the kernel dropped within those seconds (memory
// pressure) are read with a raw call, holding its thread, as nginx's
// worker without aio reads every cold file.

// neverSent is held.sent before a body was sent whole: cold whatever the
// clock says.
const neverSent = math.MinInt64 / 2

// warmFor is how far a held file's check may move on past its last whole
// send for it to count as warm: two rechecks, so that the first lend
// after a recheck finds a file sent in the period before it warm.
func (t *Tier) warmFor() int64 { return 2 * int64(t.recheck()) }

// Warm reports whether a body of h was sent whole lately.
func (h *held) Warm() bool { return h.checked.Load()-h.sent.Load() <= h.warmFor }

// Sent records that a body of h was sent whole (stored only when its
// check moved on: no write per hit).
func (h *held) Sent() {
	if c := h.checked.Load(); h.sent.Load() != c {
		h.sent.Store(c)
	}
}

var _ cache.Warmth = (*held)(nil)
