package proxy

import (
	"fmt"
	"io"
	"strconv"

	"github.com/VictoriaMetrics/metrics"
)

// writePHPMetrics writes the PHP pools' workers and counters. Pools come
// and go with reloads, so they are written from their Status and Stats at
// scrape time rather than registered in the set.
func (p *Proxy) writePHPMetrics(w io.Writer) {
	for _, ps := range p.PHPStatus() {
		pool := strconv.Quote(ps.Name)
		states := map[string]uint64{"idle": 0, "busy": 0, "suspended": 0}
		var rss int64
		pss := ps.Master.PSS // the shared engine's master and unclaimed children
		for _, wk := range ps.Workers {
			states[wk.State]++
			rss += wk.RSS
			pss += wk.PSS
		}
		for _, st := range []string{"idle", "busy", "suspended"} {
			metrics.WriteGaugeUint64(w, fmt.Sprintf(`ramjet_php_workers{pool=%s,state=%q}`, pool, st), states[st])
		}
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`ramjet_php_rss_bytes{pool=%s}`, pool), uint64(max(rss, 0)))
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`ramjet_php_pss_bytes{pool=%s}`, pool), uint64(max(pss, 0)))
		metrics.WriteGaugeUint64(w, fmt.Sprintf(`ramjet_php_queued{pool=%s}`, pool), uint64(ps.Queued))
		s := ps.Stats
		for name, v := range map[string]uint64{
			"requests": s.Requests, "spawns": s.Spawns, "crashes": s.Crashes, "timeouts": s.Timeouts,
			"recycled": s.Recycled, "busy": s.Busy, "retries": s.Retries, "resumes": s.Resumes, "client_gone": s.ClientGone,
		} {
			metrics.WriteCounterUint64(w, fmt.Sprintf(`ramjet_php_%s_total{pool=%s}`, name, pool), v)
		}
		h := s.ResumeLatency
		var cum uint64
		for i, b := range h.Bounds {
			cum += h.Counts[i]
			metrics.WriteCounterUint64(w, fmt.Sprintf(`ramjet_php_resume_seconds_bucket{pool=%s,le="%g"}`, pool, b.Seconds()), cum)
		}
		metrics.WriteCounterUint64(w, fmt.Sprintf(`ramjet_php_resume_seconds_bucket{pool=%s,le="+Inf"}`, pool), h.Count())
		metrics.WriteCounterFloat64(w, fmt.Sprintf(`ramjet_php_resume_seconds_sum{pool=%s}`, pool), h.Sum.Seconds())
		metrics.WriteCounterUint64(w, fmt.Sprintf(`ramjet_php_resume_seconds_count{pool=%s}`, pool), h.Count())
	}
}
