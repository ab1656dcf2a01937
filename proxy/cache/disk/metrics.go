package disk

import (
	"fmt"

	"github.com/VictoriaMetrics/metrics"
)

// Register adds the shared tier's series to set, bare, and returns
// their names. A site's own share registers labelled ones with
// RegisterSeries.
func (t *Tier) Register(set *metrics.Set) []string {
	return RegisterSeries(set, "", func() *Tier { return t })
}

// RegisterSeries adds a tier's series to set, each read from the tier
// cur returns at that moment (zero while it returns nil), and returns
// their names; site labels them {site="…"}, as the proxy's per-site
// series are ("": bare). A newer tier of the same site takes the series
// over without a scrape ever finding them gone.
func RegisterSeries(set *metrics.Set, site string, cur func() *Tier) []string {
	names := make([]string, 0, len(tierGauges))
	for name, f := range tierGauges {
		if site != "" {
			name = fmt.Sprintf(`%s{site=%q}`, name, site)
		}
		set.NewGauge(name, func() float64 {
			if t := cur(); t != nil {
				return f(t)
			}
			return 0
		})
		names = append(names, name)
	}
	return names
}

// tierGauges are a tier's series, by name.
var tierGauges = map[string]func(t *Tier) float64{
	"ramjet_disk_objects":               func(t *Tier) float64 { return float64(t.stats.files.Load()) },
	"ramjet_disk_bytes":                 func(t *Tier) float64 { return float64(t.stats.bytes.Load()) },
	"ramjet_disk_written_total":         func(t *Tier) float64 { return float64(t.stats.written.Load()) },
	"ramjet_disk_dropped_total":         func(t *Tier) float64 { return float64(t.stats.dropped.Load()) },
	"ramjet_disk_write_errors_total":    func(t *Tier) float64 { return float64(t.stats.failed.Load()) },
	"ramjet_disk_evicted_total":         func(t *Tier) float64 { return float64(t.stats.evicted.Load()) },
	"ramjet_disk_purged_total":          func(t *Tier) float64 { return float64(t.stats.purged.Load()) },
	"ramjet_disk_degraded":              func(t *Tier) float64 { return b2f(t.stats.degraded.Load()) },
	"ramjet_disk_loaded_objects":        func(t *Tier) float64 { return float64(t.loaded.Objects) },
	"ramjet_disk_corrupt_dropped_total": func(t *Tier) float64 { return float64(uint64(t.loaded.Corrupt) + t.stats.corrupt.Load()) },
	"ramjet_disk_hits_total":            func(t *Tier) float64 { return float64(t.stats.hits.Load()) },
	"ramjet_disk_sendfile_total":        func(t *Tier) float64 { return float64(t.stats.sendfiles.Load()) },
	"ramjet_disk_open_files":            func(t *Tier) float64 { return float64(t.kept.open.Load()) }, // this tier's: the series add up
	"ramjet_disk_queued_hits_total":     func(t *Tier) float64 { return float64(t.stats.queued.Load()) },
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Snapshot is the tier's counters at one moment.
type Snapshot struct {
	Files, Bytes                              int64
	Written, Dropped, Failed, Evicted, Purged uint64
	// Hits are the misses in RAM the disk answered, each once: a copy
	// brought back into RAM (Fetch), or lent (Lend) and answering its
	// request (cache.LendCounter); Queued those a copy waiting for the
	// writer answered; Corrupt the damaged files a fetch found (and
	// deleted). Lent is the files lent to answers (Lend, FileOf), Sent
	// the bodies sendfile sent from them (none for a lend refused or a
	// 304).
	Hits, Lent, Sent, Queued, Corrupt uint64
	Degraded                          bool
}

// Snapshot reads the counters.
func (t *Tier) Snapshot() Snapshot {
	s := &t.stats
	return Snapshot{Files: s.files.Load(), Bytes: s.bytes.Load(), Written: s.written.Load(),
		Dropped: s.dropped.Load(), Failed: s.failed.Load(), Evicted: s.evicted.Load(),
		Purged: s.purged.Load(), Hits: s.hits.Load(), Lent: s.sent.Load(), Sent: s.sendfiles.Load(), Queued: s.queued.Load(), Corrupt: s.corrupt.Load(), Degraded: s.degraded.Load()}
}
