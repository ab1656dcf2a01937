package sitestats

// Window is a span of time back from now that the counters are read
// over.
type Window uint8

// The windows of a site's counters; each is read from a ring of
// snapshots taken at its own step, so its start is exact to that step.
const (
	Minute Window = iota // the last 60 s, to the second
	Hour                 // the last 60 min, to the minute
	Day                  // the last 24 h, to 15 minutes
	windows
)

// Each window's length and step in seconds. A ring holds one snapshot
// more than length/step: the one taken a whole window ago.
var spans = [windows]struct{ length, step int64 }{
	Minute: {60, 1},
	Hour:   {3600, 60},
	Day:    {86400, 900},
}

// ring holds the latest snapshots of the counters, at most one per step.
// It is not safe for concurrent use.
type ring struct {
	step int64
	at   []int64 // when each snapshot was taken (unix seconds)
	c    []Counts
	n    int // snapshots held
	next int // slot of the next one
}

func newRing(length, step int64) ring {
	slots := int(length/step) + 1
	return ring{step: step, at: make([]int64, slots), c: make([]Counts, slots)}
}

// add keeps c as taken at now, unless the ring already has a snapshot of
// now's step (or a later one: the clock stepped back).
func (r *ring) add(now int64, c Counts) {
	if r.n > 0 {
		last := r.at[(r.next+len(r.at)-1)%len(r.at)]
		if now/r.step <= last/r.step {
			return
		}
	}
	r.at[r.next], r.c[r.next] = now, c
	r.next = (r.next + 1) % len(r.at)
	r.n = min(r.n+1, len(r.at))
}

// base is the newest snapshot taken at or before since; when there is
// none (the site is younger than the window, or no samples were taken
// since), the oldest held. ok is false for an empty ring.
func (r *ring) base(since int64) (c Counts, ok bool) {
	if r.n == 0 {
		return Counts{}, false
	}
	oldest := (r.next + len(r.at) - r.n) % len(r.at)
	best := oldest
	for i := 1; i < r.n; i++ {
		j := (oldest + i) % len(r.at)
		if r.at[j] > since {
			break
		}
		best = j
	}
	return r.c[best], true
}
