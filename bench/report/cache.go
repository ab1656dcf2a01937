package main

import (
	"fmt"
	"strings"
)

// The cache section: every cache contender on each page, and the ESI page.
var (
	cacheLabel = map[string]string{
		"ramjet":       "ramjet (cached)",
		"static":       "nginx static file",
		"fcgi":         "nginx fastcgi_cache",
		"varnish":      "Varnish",
		"ramjet_plain": "ramjet, plain 30 KB page",
	}
	esiLabel = map[string]string{
		"ramjet":       "ramjet, ESI page",
		"varnish":      "Varnish, ESI page (ESI on)",
		"ramjet_plain": "ramjet, plain 30 KB page",
	}
)

func cacheLabelOf(c, page string) string {
	if page == "esi" {
		return esiLabel[c]
	}
	return cacheLabel[c]
}

func pageTitle(page string, g map[string]string) string {
	switch page {
	case "100":
		return "100 B page"
	case "725":
		return "725 B page"
	case "30k":
		return "30 KB page (30720 B)"
	case "2m":
		return "2 MiB file (2097152 B)"
	case "esi":
		return fmt.Sprintf("ESI page: 30 KB assembled (%s B), 3 includes (2 public, 1 private per user), `Cookie: user=%s`", g["esi_size"], g["esi_user"])
	}
	return page
}

func cacheSection(d *runData) string {
	g := d.groups["cache"]
	if g == nil {
		return ""
	}
	var b strings.Builder
	rows := d.rows["cache"]
	for _, page := range d.words("cache", "pages") {
		var pr []Record
		for _, r := range rows {
			if r.Workload == page {
				pr = append(pr, r)
			}
		}
		b.WriteString("### " + pageTitle(page, g) + "\n\n")
		ss := groupBy(pr, func(r Record) string { return r.Contender })
		b.WriteString(cacheTable(page, ss).String() + "\n")
		if find(ss, "ramjet") == nil {
			b.WriteString("_ramjet not measured in this run._\n\n")
			continue
		}
		if page == "esi" {
			b.WriteString(esiRatioTable(ss))
		} else {
			b.WriteString(cacheRatioTable(page, ss))
		}
	}
	if len(rows) > 0 {
		b.WriteString(cacheAllRuns(rows))
	}
	return b.String()
}

func cacheTable(page string, ss []series) *table {
	t := newTable("server", "req/s (median)|r", "req/s (min–max)|r", "p50 ms|r", "p99 ms|r", "p99 ms (worst)|r",
		"server CPU µs/req|r", "peak RSS MiB|r", "origin PHP calls|r", "errors|r",
		"other load on server core, max %|r", "wrk core busy, max %|r", "hit check")
	for _, s := range ss {
		t.add(cacheLabelOf(s.key, page), f(0, s.med(rps)), rangeOf(s, 0, rps), f(3, s.med(p50)), f(3, s.med(p99)),
			f(3, s.max(p99)), f(2, s.med(cpu)), mib(s.max(rssKB)), phpCallsCell(s, page), d(s.sum(errs)),
			d(s.max(other)), d(s.max(loadBusy)), s.hitCell())
	}
	return t
}

// phpCallsCell: the origin's PHP requests during the runs ("–" for the
// static file, "?" when a count could not be read; per request on the ESI
// page).
func phpCallsCell(s series, page string) string {
	if s.key == "static" {
		return "–"
	}
	total := 0.0
	for _, r := range s.rows {
		if r.PHPCalls == nil {
			return "?"
		}
		total += *r.PHPCalls
	}
	if page == "esi" {
		if n := s.sum(reqs); n > 0 {
			return fmt.Sprintf("%d (%.2f/req)", int64(total), total/n)
		}
	}
	return d(total)
}

// cacheTargets: issue 2's targets, by page and contender: the req/s ratio
// ramjet must reach and whether its p99 must be no worse.
var cacheTargets = map[string]map[string]struct {
	text   string
	need   float64
	p99Too bool
}{
	"30k": {"fcgi": {"≥ 1.1× req/s, p99 ≤", 1.1, true}, "varnish": {"≥ 1.8× req/s, p99 ≤", 1.8, true}},
	"725": {"static": {"≥ 1.0× req/s", 1.0, false}},
}

func cacheRatioTable(page string, ss []series) string {
	rj := find(ss, "ramjet")
	t := newTable("ramjet vs", "req/s ×|r", "p99 ×|r", "CPU µs/req ×|r", "target (issue 2)", "met", "where ramjet loses")
	for _, s := range ss {
		if s.key == "ramjet" {
			continue
		}
		rr := ratio(rj.med(rps), s.med(rps))
		pr := ratio(rj.med(p99), s.med(p99))
		cr := ratio(rj.med(cpu), s.med(cpu))
		target, met := "–", "–"
		if tg, ok := cacheTargets[page][s.key]; ok {
			target = tg.text
			met = yesNo(rr >= tg.need && (!tg.p99Too || pr <= 1.0))
		}
		t.add(cacheLabel[s.key], f(2, rr), f(2, pr), f(2, cr), target, met,
			losses(cmp{"req/s", rr, true}, cmp{"p99", pr, false}, cmp{"CPU/req", cr, false}))
	}
	return "ramjet vs each contender (medians; req/s above 1 = ramjet faster, p99 and CPU/req below 1 = ramjet better; " +
		"the last column names where ramjet is worse by more than 2 %):\n\n" + t.String() + "\n"
}

func esiRatioTable(ss []series) string {
	rj := find(ss, "ramjet")
	t := newTable("ramjet ESI page vs", "req/s ×|r", "p99 ×|r", "CPU µs/req ×|r", "target (issue 4)", "met")
	for _, c := range []struct {
		key  string
		need float64
	}{{"ramjet_plain", 0.5}, {"varnish", 1.5}} {
		target := fmt.Sprintf("≥ %.1f× req/s", c.need)
		s := find(ss, c.key)
		if s == nil {
			t.add(esiLabel[c.key], "–", "–", "–", target, "not measured")
			continue
		}
		rr := ratio(rj.med(rps), s.med(rps))
		t.add(esiLabel[c.key], f(2, rr), f(2, ratio(rj.med(p99), s.med(p99))), f(2, ratio(rj.med(cpu), s.med(cpu))),
			target, yesNo(rr >= c.need))
	}
	return "ramjet on the ESI page against its plain 30 KB page (same round) and against Varnish with ESI on (medians; " +
		"req/s above 1 = the ESI page faster, p99 and CPU/req below 1 = better). Varnish passes the private fragment to " +
		"the origin on every request (its PHP calls above); ramjet keeps it per user (0 PHP calls). CPU µs/req on this " +
		"page includes the origin nginx and php-fpm.\n\n" + t.String() + "\n"
}

func cachePageShort(page string) string {
	switch page {
	case "esi":
		return "ESI"
	case "30k":
		return "30 KB"
	case "2m":
		return "2 MiB"
	}
	return page + " B"
}

func cacheAllRuns(rows []Record) string {
	t := newTable("round|r", "page", "server", "req/s|r", "p50 ms|r", "p99 ms|r", "CPU µs/req|r", "peak RSS MiB|r",
		"PHP calls|r", "errors|r", "requests|r", "server core busy %|r", "other load on server core %|r",
		"wrk core busy %|r", "hit check")
	for _, r := range rows {
		calls := "?"
		if r.Contender == "static" {
			calls = "–"
		} else if r.PHPCalls != nil {
			calls = d(*r.PHPCalls)
		}
		t.add(fmt.Sprint(r.Round), cachePageShort(r.Workload), cacheLabelOf(r.Contender, r.Workload), f(0, r.RPS),
			f(3, r.P50), f(3, r.P99), f(2, r.CPU), mib(r.RSS), calls, fmt.Sprint(r.Errors), fmt.Sprint(r.Requests),
			d(r.ServerBusy), d(r.Other), d(r.LoadBusy), r.Check)
	}
	return details("All runs", t.String())
}

func details(summary, body string) string {
	return "<details><summary>" + summary + "</summary>\n\n" + body + "\n</details>\n\n"
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}
