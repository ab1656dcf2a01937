package main

import (
	"sync"
	"time"
)

// A node holds a page fresh until its max-age runs out, unless a Redis
// restart came after the page was filled: that is a gap on every node
// (purges may have been lost), which leaves every page stale for the
// nodes' grace and then deletes the ones nobody asked for meanwhile. So
// a 5xx for a page filled before a gap is a failure only within that
// grace; after it the node no longer holds the page, and an origin down
// then answers 502 for it, as it should.

// gapGrace is the nodes' purge.gap_grace (their configs leave the
// default).
const gapGrace = 10 * time.Second

// held is what the soak knows of a node's copy of a URL (unix nanos):
// until when it is fresh, and when it was filled at the latest.
type held struct{ until, born int64 }

// gapLog is the Redis restarts, oldest first: when Redis was stopped,
// and until when a node may fill pages that its gap then covers (it
// notices the gap only once it reads from the new Redis).
type gapLog struct {
	mu   sync.Mutex
	gaps []gap
}

type gap struct{ from, covers int64 }

// noticeWithin bounds how long after Redis is back a node reads from it
// again (its reconnect backoff).
const noticeWithin = 5 * time.Second

func (g *gapLog) add(stopped, started time.Time) {
	g.mu.Lock()
	g.gaps = append(g.gaps, gap{stopped.UnixNano(), started.Add(noticeWithin).UnixNano()})
	g.mu.Unlock()
}

// holds reports whether the node still held h fresh when a request was
// sent: within its max-age (less a second of slack for clocks and
// rounding), and filled after every gap could cover it, or asked
// within the grace of the first gap that may (its grace starts when the
// node notices it, never before Redis stopped).
func (g *gapLog) holds(h held, sent time.Time) bool {
	at := sent.UnixNano()
	if at >= h.until-int64(time.Second) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, gp := range g.gaps {
		if gp.covers >= h.born {
			return at < gp.from+int64(gapGrace)
		}
	}
	return true
}

// heldFrom is the copy an answer sent at sent tells of: fresh for
// max-age less its Age, and filled at the latest Age (plus a second of
// rounding) before sent.
func heldFrom(sent time.Time, maxAge, age int) held {
	return held{
		until: sent.Add(time.Duration(maxAge-age) * time.Second).UnixNano(),
		born:  sent.Add(-time.Duration(age+1) * time.Second).UnixNano(),
	}
}
