package main

import "github.com/VictoriaMetrics/metrics"

// A site's own disk tier exports the shared tier's series
// (ramjet_disk_objects, ramjet_disk_hits_total, …) labelled with its
// site, as the proxy's per-site series are: {site="<first name>"}. A
// share a reload dropped closes only once the old generation drained, so
// a reload that gives the site a share again may open the next one
// first: the series then read the newest, and the old one's Close leaves
// them to it.

// register makes st's series its site's, in place of those of a tier
// opened for the site before it. Call with shares.mu held.
func (s *shares) register(st *shareTier, set *metrics.Set) {
	if old := s.series[st.label]; old != nil {
		s.unregister(old, set)
	}
	if s.series == nil {
		s.series = map[string]*shareTier{}
	}
	st.series = st.Register(set, st.label)
	s.series[st.label] = st
}

// unregister drops st's series, if it still has them. Call with
// shares.mu held.
func (s *shares) unregister(st *shareTier, set *metrics.Set) {
	for _, name := range st.series {
		set.UnregisterMetric(name)
	}
	st.series = nil
	if s.series[st.label] == st {
		delete(s.series, st.label)
	}
}
