package top

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Row is one site as the view shows it.
type Row struct {
	Name string
	// ReqPerSec is the requests per second since the previous snapshot.
	ReqPerSec float64
	// HitRatio, Errors and WAF are over the last minute.
	HitRatio    float64
	Errors, WAF uint64
	// Latency is the mean upstream time of the requests that went there
	// since the previous snapshot, else over the last minute; 0: none.
	Latency time.Duration
}

// Key is what the sites are sorted by.
type Key byte

// The sort keys, by the key that picks them.
const (
	ByRate    Key = 'r'
	ByHits    Key = 'h'
	ByLatency Key = 'l'
	ByErrors  Key = 'e'
	ByWAF     Key = 'w'
	ByName    Key = 'n'
)

var keyNames = map[Key]string{ByRate: "req/s", ByHits: "hit%", ByLatency: "origin ms", ByErrors: "err/m", ByWAF: "waf/m", ByName: "site"}

// Frame is what one refresh draws.
type Frame struct {
	At            time.Time
	Rows          []Row
	Pools         []Pool
	Conns, Parked int64
	Sort          Key
	Err           error // the last fetch failed: the frame is the one before
}

// NewFrame compares cur with prev (zero: none yet) and sorts the rows by
// key, largest first (names: alphabetical).
func NewFrame(prev, cur Snapshot, key Key) Frame {
	f := Frame{At: cur.At, Pools: cur.Pools, Conns: cur.Conns, Parked: cur.Parked, Sort: key}
	before := map[string]Counts{}
	for _, s := range prev.Sites {
		before[s.Name] = s.Totals
	}
	secs := cur.At.Sub(prev.At).Seconds()
	for _, s := range cur.Sites {
		r := Row{Name: s.Name, HitRatio: s.Minute.HitRatio, Errors: s.Minute.Errors, WAF: s.Minute.WAFBlocked,
			Latency: meanOrigin(s.Minute)}
		if b, ok := before[s.Name]; ok && secs > 0 && s.Totals.Requests >= b.Requests {
			r.ReqPerSec = float64(s.Totals.Requests-b.Requests) / secs
			if s.Totals.Origin > b.Origin {
				r.Latency = meanOrigin(Counts{Origin: s.Totals.Origin - b.Origin, OriginSeconds: s.Totals.OriginSeconds - b.OriginSeconds})
			}
		}
		f.Rows = append(f.Rows, r)
	}
	sortRows(f.Rows, key)
	return f
}

func meanOrigin(c Counts) time.Duration {
	if c.Origin == 0 {
		return 0
	}
	return time.Duration(c.OriginSeconds / float64(c.Origin) * float64(time.Second)).Round(time.Microsecond)
}

// sortRows sorts by key, largest first, ties by name.
func sortRows(rows []Row, key Key) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		var c int
		switch key {
		case ByRate:
			c = cmp.Compare(b.ReqPerSec, a.ReqPerSec)
		case ByHits:
			c = cmp.Compare(b.HitRatio, a.HitRatio)
		case ByLatency:
			c = cmp.Compare(b.Latency, a.Latency)
		case ByErrors:
			c = cmp.Compare(b.Errors, a.Errors)
		case ByWAF:
			c = cmp.Compare(b.WAF, a.WAF)
		}
		if c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}
