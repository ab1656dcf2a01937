package main

// The WAF group (issue 16): ramjet with its WAF against nginx +
// ModSecurity + the CRS. Rows ("workload"): hit (ramjet's cached page;
// ramjet_waf, ramjet_nowaf, modsec), nocache, query and post2k
// (inspected requests; ramjet_waf_fwd, ramjet_nowaf_fwd, modsec), and rss (ramjet with the
// WAF on for N sites, contender ramjet_waf_sites_N).

var wafLabels = map[string]string{
	"ramjet_waf":       "ramjet, WAF block",
	"ramjet_waf_fwd":   "ramjet, WAF block (+ origin nginx, php-fpm)",
	"ramjet_nowaf":     "ramjet, WAF off",
	"ramjet_nowaf_fwd": "ramjet, WAF off (+ origin nginx, php-fpm)",
	"modsec":           "nginx + ModSecurity + CRS",
}

var wafRows = []struct{ key, label string }{
	{"hit", "1 KiB page, cached by ramjet"},
	{"nocache", "1 KiB page, uncacheable"},
	{"query", "1 KiB page, uncacheable, ?s=hello+world&p=2"},
	{"post2k", "2 KiB form POST to PHP"},
}

func wafTable(rows []Record) *table {
	t := newTable("request", "server", "req/s (median)|r", "vs ModSecurity|r", "p50 ms|r", "p99 ms|r",
		"server CPU µs/req|r", "WAF evaluations|r", "errors|r", "check")
	for _, w := range wafRows {
		ss := groupBy(filter(rows, w.key), func(r Record) string { return r.Contender })
		ms := find(ss, "modsec")
		for _, s := range ss {
			vs := "–"
			if ms != nil && s.key != ms.key {
				vs = f(2, ratio(s.med(rps), ms.med(rps))) + "×"
			}
			evals := "–"
			if v := s.rows[len(s.rows)-1].param("waf_evaluations"); v != "" {
				evals = v
			}
			t.add(w.label, wafLabels[s.key], f(0, s.med(rps)), vs, f(3, s.med(p50)), f(3, s.med(p99)),
				f(1, s.med(cpu)), evals, d(s.sum(errs)), wafCheck(s))
		}
	}
	return t
}

// wafTargets are issue 16's: a cached page ≥ 50× nginx + ModSecurity and
// ≥ 0.9× ramjet without the WAF; inspected requests ≥ 1.0× ModSecurity.
func wafTargets(rows []Record) string {
	t := newTable("target (issue 16)", "ratio|r", "met")
	medOf := func(workload, contender string) float64 {
		if s := find(groupBy(filter(rows, workload), func(r Record) string { return r.Contender }), contender); s != nil {
			return s.med(rps)
		}
		return 0
	}
	add := func(what string, r, want float64) {
		if r > 0 {
			t.add(what, f(2, r)+"×", yesNo(r >= want))
		}
	}
	add("cached page, WAF on, vs nginx + ModSecurity: ≥ 50×", ratio(medOf("hit", "ramjet_waf"), medOf("hit", "modsec")), 50)
	add("cached page, WAF on, vs WAF off: ≥ 0.9×", ratio(medOf("hit", "ramjet_waf"), medOf("hit", "ramjet_nowaf")), 0.9)
	for _, w := range wafRows[1:] {
		add(w.label+", vs nginx + ModSecurity: ≥ 1.0×", ratio(medOf(w.key, "ramjet_waf_fwd"), medOf(w.key, "modsec")), 1)
	}
	return t.String()
}

// wafCheck is a row's check cell: "hit" for ramjet's cached page, "ok"
// (status and body checked) for the others, or the failed check in bold.
func wafCheck(s series) string {
	if n := s.note("hit", "ok"); n != "" {
		return bold(n)
	}
	return s.rows[len(s.rows)-1].Check
}

func wafRSS(rows []Record) string {
	rss := filter(rows, "rss")
	if len(rss) == 0 {
		return ""
	}
	t := newTable("ramjet, WAF on", "sites|r", "RSS MiB|r")
	for _, r := range rss {
		t.add("one rule set, shared", r.param("sites"), mib(r.RSS))
	}
	return t.String()
}

func filter(rows []Record, workload string) []Record {
	var out []Record
	for _, r := range rows {
		if r.Workload == workload {
			out = append(out, r)
		}
	}
	return out
}

func wafSection(d *runData) (string, error) {
	g := d.groups["waf"]
	if g == nil {
		return "", nil
	}
	tables := ""
	if g["skip"] == "" {
		rows := d.rows["waf"]
		tables = wafTable(rows).String() + "\n" + wafTargets(rows) + "\n" + wafRSS(rows)
	}
	return render("waf.tmpl", d, g, map[string]string{"tables": tables})
}
