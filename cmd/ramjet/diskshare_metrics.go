package main

import (
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
	"github.com/ramjet-proxy/ramjet/proxy/cache/disk"
)

// A site's own disk tier exports the shared tier's series
// (ramjet_disk_objects, ramjet_disk_hits_total, …) labelled with its
// site, as the proxy's per-site series are: {site="<first name>"}. A
// share a reload dropped closes only once the old generation drained, so
// a reload that gives the site a share again may open the next one
// first: the series then read the newest, and the old one's Close leaves
// them to it. The series stay registered while the site has a share, a
// newer tier taking them over in place: unregistering them for it left a
// moment in which a scrape found none.

// siteSeries is a site's registered series and the tier they read.
type siteSeries struct {
	cur   atomic.Pointer[shareTier]
	names []string
}

// register makes st's series its site's, in place of those of a tier
// opened for the site before it. Call with shares.mu held.
func (s *shares) register(st *shareTier, set *metrics.Set) {
	if ss := s.series[st.label]; ss != nil {
		ss.cur.Store(st)
		return
	}
	if s.series == nil {
		s.series = map[string]*siteSeries{}
	}
	ss := &siteSeries{}
	ss.cur.Store(st)
	ss.names = disk.RegisterSeries(set, st.label, func() *disk.Tier {
		if t := ss.cur.Load(); t != nil {
			return t.Tier
		}
		return nil
	})
	s.series[st.label] = ss
}

// unregister drops the site's series if they still read st. Call with
// shares.mu held.
func (s *shares) unregister(st *shareTier, set *metrics.Set) {
	ss := s.series[st.label]
	if ss == nil || ss.cur.Load() != st {
		return
	}
	for _, name := range ss.names {
		set.UnregisterMetric(name)
	}
	delete(s.series, st.label)
}
