package main

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy"
	"github.com/ramjet-proxy/ramjet/proxy/sitestats"
)

// GET /stats on the admin listener: each site's numbers for its owner.
// A site's token reads its own site (host=, when given, must be one of
// its hosts); the operator's reads the site answering host=, or every
// site. urls=0 leaves the URL lists out (ramjet top polls every second).

// countsJSON is a site's counters, since start or over a window.
type countsJSON struct {
	Requests      uint64  `json:"requests"`
	Hits          uint64  `json:"hits"`
	Misses        uint64  `json:"misses"`
	Passes        uint64  `json:"passes"`
	HitRatio      float64 `json:"hit_ratio"`
	Purges        uint64  `json:"purges"`
	WAFBlocked    uint64  `json:"waf_blocked"`
	Errors        uint64  `json:"errors"`
	Origin        uint64  `json:"origin_requests"`
	OriginSeconds float64 `json:"origin_seconds"`
}

func countsOf(c sitestats.Counts) countsJSON {
	return countsJSON{Requests: c.Requests, Hits: c.Hits, Misses: c.Misses, Passes: c.Passes, HitRatio: c.HitRatio(),
		Purges: c.Purges, WAFBlocked: c.WAFBlocked, Errors: c.Errors, Origin: c.Origin, OriginSeconds: c.OriginTime.Seconds()}
}

type urlJSON struct {
	URL    string    `json:"url"`
	Reason string    `json:"reason"`
	Count  uint64    `json:"count"`
	Over   uint64    `json:"overcount"`
	Last   time.Time `json:"last"`
}

type siteStatsJSON struct {
	Site   string     `json:"site"`
	Cached cachedJSON `json:"cached"`
	Totals countsJSON `json:"totals"`
	Minute countsJSON `json:"minute"`
	Hour   countsJSON `json:"hour"`
	Day    countsJSON `json:"day"`
	// Uncached is omitted with urls=0.
	Uncached []urlJSON `json:"uncached,omitempty"`
}

type cachedJSON struct {
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

func siteStatsOf(s proxy.SiteStats, now time.Time, urls bool) siteStatsJSON {
	h := s.History
	out := siteStatsJSON{Site: s.Site, Cached: cachedJSON{Entries: s.Entries, Bytes: s.Bytes}, Totals: countsOf(h.Totals()),
		Minute: countsOf(h.Over(sitestats.Minute, now)), Hour: countsOf(h.Over(sitestats.Hour, now)),
		Day: countsOf(h.Over(sitestats.Day, now))}
	if urls {
		out.Uncached = []urlJSON{}
		for _, u := range h.URLs(now) {
			out.Uncached = append(out.Uncached, urlJSON{URL: u.URL, Reason: u.Reason, Count: u.Count, Over: u.Over,
				Last: time.Unix(u.Last, 0).UTC()})
		}
	}
	return out
}

// serveSiteStats answers GET /stats.
func (d *daemon) serveSiteStats(ctx *fasthttp.RequestCtx) {
	own, ok := d.api.Load().Caller(ctx)
	if !ok {
		return
	}
	if !ctx.IsGet() && !ctx.IsHead() {
		ctx.Response.Header.Set("Allow", "GET, HEAD")
		ctx.Error("GET only\n", fasthttp.StatusMethodNotAllowed)
		return
	}
	host, urls, err := statsQuery(ctx.QueryArgs())
	if err != "" {
		ctx.Error(err+"\n", fasthttp.StatusBadRequest)
		return
	}
	scope := own
	if host != "" {
		scope = d.proxy.ScopeOf(host)
		if own != "" && scope != own {
			ctx.Error(host+" is not a host of this token's site\n", fasthttp.StatusForbidden)
			return
		}
	}
	var sites []proxy.SiteStats
	if scope == "" {
		sites = d.proxy.AllSiteStats()
	} else if s, ok := d.proxy.SiteStatsOf(scope); ok {
		sites = []proxy.SiteStats{s}
	} else {
		ctx.Error("no configured site answers "+host+"\n", fasthttp.StatusNotFound)
		return
	}
	slices.SortFunc(sites, func(a, b proxy.SiteStats) int { return strings.Compare(a.Site, b.Site) })
	now := time.Now()
	out := struct {
		Sites []siteStatsJSON `json:"sites"`
	}{Sites: make([]siteStatsJSON, 0, len(sites))}
	for _, s := range sites {
		out.Sites = append(out.Sites, siteStatsOf(s, now, urls))
	}
	body, jerr := json.MarshalIndent(out, "", "  ")
	if jerr != nil {
		ctx.Error("stats encoding failed\n", fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBody(append(body, '\n'))
}

// statsQuery reads /stats's query strictly: host= and urls=0|1, nothing
// else.
func statsQuery(args *fasthttp.Args) (host string, urls bool, problem string) {
	urls = true
	args.VisitAll(func(k, v []byte) {
		switch string(k) {
		case "host":
			host = string(v)
		case "urls":
			switch string(v) {
			case "0":
				urls = false
			case "1":
			default:
				problem = "urls: want 0 or 1"
			}
		default:
			problem = "unknown parameter " + string(k) + " (want host, urls)"
		}
	})
	return host, urls, problem
}
