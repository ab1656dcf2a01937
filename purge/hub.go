package purge

import (
	"github.com/VictoriaMetrics/metrics"
)

// Sources of purges, as counted by Hub.
const (
	SourceHeader = "header" // X-LiteSpeed-Purge and friends on an upstream response
	SourceAPI    = "api"    // admin POST /purge (and so the CLI through it)
	SourceMethod = "method" // PURGE / REFRESH on the main listener
	SourceCLI    = "cli"
)

// Hub is where every accepted purge goes, whatever its source: it applies
// it locally, counts it, and publishes it for the other nodes.
type Hub struct {
	local Invalidator
	fan   *Fanout // nil on a single node
	set   *metrics.Set
	count map[string]*metrics.Counter // by source; read-only after NewHub
}

// NewHub returns a hub applying purges to local and publishing them on fan
// (nil on a single node). m may be nil.
func NewHub(local Invalidator, fan *Fanout, m *metrics.Set) *Hub {
	if m == nil {
		m = metrics.NewSet()
	}
	h := &Hub{local: local, fan: fan, set: m, count: make(map[string]*metrics.Counter)}
	for _, s := range []string{SourceHeader, SourceAPI, SourceMethod, SourceCLI} {
		h.count[s] = m.GetOrCreateCounter(purgesTotal(s))
	}
	return h
}

func purgesTotal(source string) string {
	return `ramjet_purges_total{source="` + source + `"}`
}

// Apply applies cmd locally and, unless it is private (it concerns one
// client of this node) or empty, publishes it to the other nodes. It does
// not wait for Redis. source labels the metric: one of the Source
// constants.
func (h *Hub) Apply(cmd Command, source string) Result {
	res := h.local.Purge(cmd)
	c := h.count[source]
	if c == nil {
		c = h.set.GetOrCreateCounter(purgesTotal(source))
	}
	c.Inc()
	if h.fan != nil && !cmd.Private && len(cmd.Targets) > 0 {
		h.fan.Publish(cmd)
	}
	return res
}

var _ Applier = (*Hub)(nil)
