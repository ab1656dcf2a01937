package main

import (
	"fmt"
	"strings"
)

// The WordPress group: a real WordPress uncached through nginx + php-fpm,
// cached through ramjet, uncached through ramjet's docroot mode; and the
// latency of one miss through each path.
var (
	wpLabel = map[string]string{
		"fpm":     "nginx + php-fpm (uncached)",
		"cached":  "ramjet → nginx + php-fpm (cached)",
		"rjdoc":   "ramjet docroot (php-cgi pool)",
		"rjproxy": "ramjet → nginx + php-fpm (bypass)",
		"fpmck":   "nginx + php-fpm (uncached, bypass cookie)",
		"rjdocld": "ramjet docroot (php-cgi pool, bypass cookie)",
	}
	wpOrder     = []string{"fpm", "cached", "fpmck", "rjdocld"}
	wpMissOrder = []string{"rjdoc", "fpm", "rjproxy"}
)

// rate prints a WordPress req/s: uncached pages answer tens per second.
func rate(v float64) string {
	if v < 100 {
		return f(1, v)
	}
	return f(0, v)
}

func wpTable(pages []string, ss []series) *table {
	t := newTable("page", "server", "req/s (median)|r", "req/s (min–max)|r", "p50 ms|r", "p99 ms|r", "p99 ms (worst)|r",
		"server CPU µs/req|r", "requests (all rounds)|r", "errors (timeouts)|r", "origin CPU ms in a cached run, max|r",
		"other load on server core, max %|r", "wrk core busy, max %|r", "check")
	for _, page := range pages {
		for _, c := range wpOrder {
			s := find(ss, page+"/"+c)
			if s == nil {
				continue
			}
			chk, orig := "ok", "–"
			if c == "cached" {
				chk = "hit"
				orig = d(s.max(func(r Record) float64 { return r.OriginMS }))
			}
			if n := s.note("ok", "hit"); n != "" {
				chk = bold(n)
			}
			t.add(page, wpLabel[c], rate(s.med(rps)), rate(s.min(rps))+"–"+rate(s.max(rps)), f(3, s.med(p50)),
				f(3, s.med(p99)), f(3, s.max(p99)), f(1, s.med(cpu)), d(s.sum(reqs)),
				fmt.Sprintf("%d (%d)", int64(s.sum(errs)), int64(s.sum(func(r Record) float64 { return float64(r.Timeouts) }))),
				orig, d(s.max(other)), d(s.max(loadBusy)), chk)
		}
	}
	return t
}

func wpRatioTables(pages []string, ss []series, conns string) string {
	const target = "≥ 500× req/s, p99 < 10 ms"
	t := newTable("page", "req/s ×|r", "cached p99 ms|r", "uncached p99 ms|r", "target", "met")
	for _, page := range pages {
		x, r := find(ss, page+"/fpm"), find(ss, page+"/cached")
		if x == nil || r == nil {
			t.add(page, "–", "–", "–", target, "not measured")
			continue
		}
		rr := ratio(r.med(rps), x.med(rps))
		t.add(page, f(0, rr), f(3, r.med(p99)), f(1, x.med(p99)), target, yesNo(rr >= 500 && r.med(p99) < 10))
	}
	var b strings.Builder
	b.WriteString("Cached ÷ uncached (medians). Target (issue 6): cached ≥ 500× the uncached req/s, with the cached p99 " +
		"under 10 ms at " + conns + " connections.\n\n" + t.String() + "\n")
	u := newTable("page", "req/s ×|r", "p99 ×|r", "CPU µs/req ×|r", "where ramjet loses")
	for _, page := range pages {
		r, x := find(ss, page+"/rjdocld"), find(ss, page+"/fpmck")
		if r == nil || x == nil {
			continue
		}
		rr := ratio(r.med(rps), x.med(rps))
		pr := ratio(r.med(p99), x.med(p99))
		cr := ratio(r.med(cpu), x.med(cpu))
		u.add(page, f(2, rr), f(2, pr), f(2, cr), losses(cmp{"req/s", rr, true}, cmp{"p99", pr, false}, cmp{"CPU/req", cr, false}))
	}
	if len(u.rows) > 0 {
		b.WriteString("Uncached under load: ramjet docroot ÷ nginx + php-fpm, both with the bypass cookie (medians; req/s " +
			"above 1 = ramjet faster, p99 and CPU/req below 1 = ramjet better; the last column names where ramjet is " +
			"worse by more than 2 %):\n\n" + u.String() + "\n")
	}
	return b.String()
}

// wpMissTable: one request at a time through each path (nearest-rank
// percentiles of the samples, and p50 against nginx + php-fpm's).
func wpMissTable(pages []string, rows []Record, checks map[string]string) string {
	if len(rows) == 0 {
		return ""
	}
	ss := groupBy(rows, pageKey)
	t := newTable("page", "path", "samples|r", "p50 ms|r", "p99 ms|r", "max ms|r", "mean ms|r", "p50 ÷ nginx + php-fpm|r", "check")
	for _, page := range pages {
		base := 0.0
		if s := find(ss, page+"/fpm"); s != nil {
			base = nearestRank(s.vals(timeMS), 0.5)
		}
		for _, c := range wpMissOrder {
			chk := checks["miss_"+page+"_"+c]
			if chk == "" {
				chk = "ok"
			}
			if chk != "ok" {
				chk = bold(chk)
			}
			s := find(ss, page+"/"+c)
			if s == nil {
				t.add(page, wpLabel[c], "0", "–", "–", "–", "–", "–", chk)
				continue
			}
			v := s.vals(timeMS)
			p := nearestRank(v, 0.5)
			rel := "–"
			if base > 0 && p > 0 {
				rel = f(2, p/base)
			}
			t.add(page, wpLabel[c], fmt.Sprint(len(v)), f(2, p), f(2, nearestRank(v, 0.99)), f(2, maxOf(v)),
				f(2, s.sum(timeMS)/float64(len(v))), rel, chk)
		}
	}
	return t.String()
}

func timeMS(r Record) float64 { return r.TimeMS }

func wpAllRuns(rows []Record) string {
	t := newTable("round|r", "page", "server", "req/s|r", "p50 ms|r", "p99 ms|r", "CPU µs/req|r", "requests|r", "errors|r",
		"timeouts|r", "origin CPU ms|r", "server core busy %|r", "other load on server core %|r", "wrk core busy %|r",
		"body B|r", "check")
	for _, r := range rows {
		t.add(fmt.Sprint(r.Round), r.Workload, wpLabel[r.Contender], f(1, r.RPS), f(3, r.P50), f(3, r.P99), f(2, r.CPU),
			fmt.Sprint(r.Requests), fmt.Sprint(r.Errors), fmt.Sprint(r.Timeouts), d(r.OriginMS), d(r.ServerBusy),
			d(r.Other), d(r.LoadBusy), fmt.Sprint(r.Bytes), r.Check)
	}
	return details("All WordPress runs", t.String())
}

func wpSection(d *runData) (string, error) {
	g := d.groups["wp"]
	if g == nil {
		return "", nil
	}
	pages := d.words("wp", "pages")
	rows := d.rows["wp"]
	ss := groupBy(rows, pageKey)
	tables := map[string]string{}
	if g["skip"] == "" {
		tables["table"] = wpTable(pages, ss).String()
		tables["ratio"] = wpRatioTables(pages, ss, g["conns"])
		tables["miss"] = wpMissTable(pages, d.rows["wpmiss"], g)
		tables["allruns"] = wpAllRuns(rows)
	}
	return render("wp.tmpl", d, g, tables)
}
