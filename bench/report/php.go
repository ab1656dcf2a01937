package main

import (
	"fmt"
	"math"
	"sort"
)

// The PHP section: ramjet docroot mode (its php-cgi pool) against nginx +
// php-fpm, uncached; the resume-from-SIGSTOP latency; ab and siege.
var (
	phpLabel = map[string]string{"rjphp": "ramjet docroot (php-cgi pool)", "fpm": "nginx + php-fpm"}
	phpTitle = map[string]string{
		"hello":    "hello.php (Hello, World!)",
		"phpinfo":  "phpinfo.php (phpinfo())",
		"sleep30k": "sleep30k.php (usleep 5 ms, 30720 B)",
	}
	phpOrder = []string{"rjphp", "fpm"}
	// phpTargets: issue 5's req/s targets (sleep30k also needs p99 ≤ 1.0×).
	phpTargets = map[string]float64{"hello": 2.5, "phpinfo": 1.3, "sleep30k": 1.0}
)

func pageKey(r Record) string { return r.Workload + "/" + r.Contender }

func phpTable(pages []string, ss []series) *table {
	t := newTable("page", "server", "req/s (median)|r", "req/s (min–max)|r", "p50 ms|r", "p99 ms|r", "p99 ms (worst)|r",
		"server CPU µs/req|r", "of it PHP|r", "of it the front|r", "PHP pool RSS MiB (PSS) after the run|r",
		"front RSS MiB|r", "PHP calls/req|r", "errors|r", "body B|r", "other load on server core, max %|r",
		"wrk core busy, max %|r", "check")
	for _, page := range pages {
		for _, c := range phpOrder {
			s := find(ss, page+"/"+c)
			if s == nil {
				continue
			}
			last := s.rows[len(s.rows)-1]
			chk := "ok"
			if n := s.note("ok"); n != "" {
				chk = bold(n)
			}
			calls := "?"
			if last.PHPCalls != nil {
				calls = f(2, s.med(phpCallsOf))
			}
			t.add(phpTitle[page], phpLabel[c], f(0, s.med(rps)), rangeOf(*s, 0, rps), f(3, s.med(p50)), f(3, s.med(p99)),
				f(3, s.max(p99)), f(1, s.med(cpu)), f(1, s.med(phpCPU)), f(1, s.med(cpu)-s.med(phpCPU)),
				fmt.Sprintf("%s (%s), %d workers", mib(last.RSS), mib(last.PSS), last.Workers), mib(last.FrontRSS),
				calls, d(s.sum(errs)), fmt.Sprint(last.Bytes), d(s.max(other)), d(s.max(loadBusy)), chk)
		}
	}
	return t
}

func phpRatioTable(pages []string, ss []series) string {
	t := newTable("page", "req/s ×|r", "p99 ×|r", "CPU µs/req ×|r", "front CPU ×|r", "PHP pool RSS ×|r", "ceiling ×|r",
		"target (issue 5)", "met")
	for _, page := range pages {
		target := fmt.Sprintf("≥ %.1f× req/s", phpTargets[page])
		if page == "sleep30k" {
			target = "≥ 1.0× req/s, p99 ≤ 1.0×"
		}
		r, x := find(ss, page+"/rjphp"), find(ss, page+"/fpm")
		if r == nil || x == nil {
			t.add(phpTitle[page], "–", "–", "–", "–", "–", "–", target, "not measured")
			continue
		}
		rr := ratio(r.med(rps), x.med(rps))
		pr := ratio(r.med(p99), x.med(p99))
		front := ratio(r.med(cpu)-r.med(phpCPU), x.med(cpu)-x.med(phpCPU))
		pool := ratio(r.rows[len(r.rows)-1].RSS, x.rows[len(x.rows)-1].RSS)
		// the req/s ratio ramjet would reach if its own work cost nothing
		ceil := ratio(x.med(cpu), r.med(phpCPU))
		ok := rr >= phpTargets[page] && (page != "sleep30k" || pr <= 1.0)
		t.add(phpTitle[page], f(2, rr), f(2, pr), f(2, ratio(r.med(cpu), x.med(cpu))), f(2, front), f(2, pool), f(2, ceil),
			target, yesNo(ok))
	}
	return "ramjet docroot against nginx + php-fpm (medians; req/s above 1 = ramjet faster, p99 and CPU/req below 1 = " +
		"ramjet better):\n\n" + t.String() + "\n"
}

func phpAllRuns(rows []Record) string {
	t := newTable("round|r", "page", "server", "req/s|r", "p50 ms|r", "p99 ms|r", "CPU µs/req|r", "requests|r", "errors|r",
		"PHP pool RSS MiB|r", "PSS MiB|r", "PHP calls/req|r", "server core busy %|r", "other load on server core %|r",
		"wrk core busy %|r", "check")
	for _, r := range rows {
		calls := "?"
		if r.PHPCalls != nil {
			calls = f(2, *r.PHPCalls)
		}
		t.add(fmt.Sprint(r.Round), r.Workload, phpLabel[r.Contender], f(0, r.RPS), f(3, r.P50), f(3, r.P99), f(2, r.CPU),
			fmt.Sprint(r.Requests), fmt.Sprint(r.Errors), mib(r.RSS), mib(r.PSS), calls, d(r.ServerBusy), d(r.Other),
			d(r.LoadBusy), r.Check)
	}
	return details("All PHP runs", t.String())
}

// nearestRank is the p-th percentile of v by nearest rank (the maximum for
// p99 of fewer than 100 samples).
func nearestRank(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// resumeRow is "samples | p50 | p99 | max" of the resume test's cold or warm requests.
func resumeCells(rows []Record, which string) []string {
	var v []float64
	for _, r := range rows {
		if r.Workload == which {
			v = append(v, r.TimeMS)
		}
	}
	if len(v) == 0 {
		return []string{"0", "–", "–", "–"}
	}
	return []string{fmt.Sprint(len(v)), f(3, nearestRank(v, 0.5)), f(3, nearestRank(v, 0.99)), f(3, maxOf(v))}
}

func resumeTable(rows []Record) string {
	if len(rows) == 0 {
		return ""
	}
	t := newTable("request", "samples|r", "p50 ms|r", "p99 ms|r", "max ms|r")
	t.add(append([]string{"on a suspended worker (SIGCONT first)"}, resumeCells(rows, "cold")...)...)
	t.add(append([]string{"on a warm idle worker"}, resumeCells(rows, "warm")...)...)
	return t.String()
}

func phpSection(d *runData) (string, error) {
	g := d.groups["php"]
	if g == nil {
		return "", nil
	}
	pages := d.words("php", "pages")
	rows := d.rows["php"]
	ss := groupBy(rows, pageKey)
	return render("php.tmpl", d, g, map[string]string{
		"table":   phpTable(pages, ss).String(),
		"ratio":   phpRatioTable(pages, ss),
		"resume":  resumeTable(d.rows["resume"]),
		"allruns": phpAllRuns(rows),
	})
}

// ab and siege on the PHP section's servers.
var ptOrder = []string{"ab", "siege"}

func ptKey(r Record) string { return r.Workload + "/" + r.Tool + "/" + r.Contender }

func phptoolsTables(pages []string, cmds map[string]string, ss []series) string {
	t := newTable("page", "load", "server", "req/s (median)|r", "req/s (min–max)|r", "mean ms|r", "p50 ms|r", "p99 ms|r",
		"max ms (worst)|r", "server CPU µs/req|r", "requests (all rounds)|r", "failed|r", "check")
	// siege gives no percentiles: its rows have no p50_ms or p99_ms
	has := func(s *series, field string) bool { return s.rows[0].Params[field] != "" }
	for _, page := range pages {
		for _, tool := range ptOrder {
			for _, c := range phpOrder {
				s := find(ss, page+"/"+tool+"/"+c)
				if s == nil {
					continue
				}
				chk := "ok"
				if n := s.note("ok"); n != "" {
					chk = bold(n)
				}
				p50c, p99c := "–", "–"
				if has(s, "p50_ms") {
					p50c, p99c = num(s.med(p50)), num(s.med(p99))
				}
				t.add(page+".php", "`"+cmds[tool]+"`", phpLabel[c], f(0, s.med(rps)), rangeOf(*s, 0, rps), f(1, s.med(meanMS)),
					p50c, p99c, f(0, s.max(maxMS)), f(1, s.med(cpu)), d(s.sum(reqs)),
					d(s.sum(func(r Record) float64 { return float64(r.Failed) })), chk)
			}
		}
	}
	r := newTable("page", "load", "req/s ×|r", "mean ×|r", "p99 ×|r", "CPU µs/req ×|r", "where ramjet loses")
	for _, page := range pages {
		for _, tool := range ptOrder {
			rj, x := find(ss, page+"/"+tool+"/rjphp"), find(ss, page+"/"+tool+"/fpm")
			if rj == nil || x == nil {
				continue
			}
			rr := ratio(rj.med(rps), x.med(rps))
			mr := ratio(rj.med(meanMS), x.med(meanMS))
			cr := ratio(rj.med(cpu), x.med(cpu))
			cs := []cmp{{"req/s", rr, true}, {"mean", mr, false}}
			pc := "–"
			if has(x, "p99_ms") && x.med(p99) > 0 {
				pr := ratio(rj.med(p99), x.med(p99))
				pc = f(2, pr)
				cs = append(cs, cmp{"p99", pr, false})
			}
			cs = append(cs, cmp{"CPU/req", cr, false})
			r.add(page+".php", "`"+cmds[tool]+"`", f(2, rr), f(2, mr), pc, f(2, cr), losses(cs...))
		}
	}
	return t.String() + "\nramjet docroot ÷ nginx + php-fpm (medians; req/s above 1 = ramjet faster, latency and CPU/req below 1 = " +
		"ramjet better; the last column names where ramjet is worse by more than 2 %):\n\n" + r.String() + "\n"
}

func phptoolsSection(d *runData) (string, error) {
	g := d.groups["phptools"]
	if g == nil {
		return "", nil
	}
	cmds := map[string]string{"ab": g["ab_cmd"], "siege": g["siege_cmd"]}
	ss := groupBy(d.rows["phptools"], ptKey)
	tables := ""
	if g["skip"] == "" {
		tables = phptoolsTables(d.words("phptools", "pages"), cmds, ss)
	}
	return render("phptools.tmpl", d, g, map[string]string{"tables": tables})
}
