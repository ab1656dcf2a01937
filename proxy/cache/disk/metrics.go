package disk

import (
	"fmt"

	"github.com/VictoriaMetrics/metrics"
)

// Register adds the tier's series to set and returns their names: the
// shared tier's bare, a site's own share's labelled with its site (site),
// as the proxy's per-site series are.
func (t *Tier) Register(set *metrics.Set, site string) []string {
	s := &t.stats
	gauges := map[string]func() float64{
		"ramjet_disk_objects":               func() float64 { return float64(s.files.Load()) },
		"ramjet_disk_bytes":                 func() float64 { return float64(s.bytes.Load()) },
		"ramjet_disk_written_total":         func() float64 { return float64(s.written.Load()) },
		"ramjet_disk_dropped_total":         func() float64 { return float64(s.dropped.Load()) },
		"ramjet_disk_write_errors_total":    func() float64 { return float64(s.failed.Load()) },
		"ramjet_disk_evicted_total":         func() float64 { return float64(s.evicted.Load()) },
		"ramjet_disk_purged_total":          func() float64 { return float64(s.purged.Load()) },
		"ramjet_disk_degraded":              func() float64 { return b2f(s.degraded.Load()) },
		"ramjet_disk_loaded_objects":        func() float64 { return float64(t.loaded.Objects) },
		"ramjet_disk_corrupt_dropped_total": func() float64 { return float64(uint64(t.loaded.Corrupt) + s.corrupt.Load()) },
		"ramjet_disk_hits_total":            func() float64 { return float64(s.hits.Load()) },
		"ramjet_disk_sendfile_total":        func() float64 { return float64(s.sendfiles.Load()) },
		"ramjet_disk_open_files":            func() float64 { return float64(t.kept.open.Load()) }, // this tier's: the series add up
		"ramjet_disk_queued_hits_total":     func() float64 { return float64(s.queued.Load()) },
	}
	names := make([]string, 0, len(gauges))
	for name, f := range gauges {
		if site != "" {
			name = fmt.Sprintf(`%s{site=%q}`, name, site)
		}
		set.NewGauge(name, f)
		names = append(names, name)
	}
	return names
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
