package main

// The disk tier group (issue 29, bench/disk.bash): ws4x (a working set 4×
// ramjet's RAM tier; ramjet_disk against fcgi, nginx fastcgi_cache),
// upgrade (SIGUSR2 under load) and start (the first hit after a start
// on a full tier), each ramjet_disk's alone but ws4x.

var diskLabels = labels{
	"ramjet_disk": "ramjet, disk tier on",
	"fcgi":        "nginx fastcgi_cache",
}

func diskWS(rows []Record) *table {
	t := newTable("server", "req/s (median)|r", "vs fastcgi_cache|r", "p50 ms|r", "p99 ms|r",
		"server CPU µs/req|r", "disk hits|r", "PHP calls|r", "errors|r", "check")
	ss := groupBy(filter(rows, "ws4x"), func(r Record) string { return r.Contender })
	fc := find(ss, "fcgi")
	for _, s := range ss {
		vs := "–"
		if fc != nil && s.key != fc.key {
			vs = f(2, ratio(s.med(rps), fc.med(rps))) + "×"
		}
		last := s.rows[len(s.rows)-1]
		t.add(diskLabels.of(s.key), f(0, s.med(rps)), vs, f(3, s.med(p50)), f(3, s.med(p99)), f(1, s.med(cpu)),
			dash(last.param("disk_hits")), dash(last.param("php_calls")), d(s.sum(errs)), checkCell(last.Check))
	}
	return t
}

func diskUpgrade(rows []Record) *table {
	t := newTable("upgrade under load", "req/s|r", "requests|r", "errors|r", "pages from the origin|r", "handed over", "check")
	for _, r := range filter(rows, "upgrade") {
		t.add(diskLabels.of(r.Contender), f(0, r.RPS), dash(r.param("requests")), d(float64(r.Errors)),
			dash(r.param("origin_fetches"))+" of "+dash(r.param("pages"))+" ("+dash(r.param("origin_pct"))+" %)",
			dash(r.param("handed_over")), checkCell(r.Check))
	}
	return t
}

func diskStart(rows []Record) *table {
	t := newTable("start on a full tier", "disk MiB|r", "first hit after s|r", "objects loaded into RAM|r", "check")
	for _, r := range filter(rows, "start") {
		t.add(diskLabels.of(r.Contender), mib(paramNum(r, "disk_bytes")/1024), dash(r.param("first_hit_s")),
			dash(r.param("loaded_objects")), checkCell(r.Check))
	}
	return t
}

// diskTargets are issue 29's on the rows: hits from disk ≥ 0.8× nginx
// fastcgi_cache, an upgrade with 0 errors and ≤ 1 % of the pages from
// the origin, the first hit within 2 s of a start.
func diskTargets(rows []Record) string {
	t := newTable("target (issue 29)", "measured|r", "met")
	ss := groupBy(filter(rows, "ws4x"), func(r Record) string { return r.Contender })
	if rd, fc := find(ss, "ramjet_disk"), find(ss, "fcgi"); rd != nil && fc != nil {
		r := ratio(rd.med(rps), fc.med(rps))
		t.add("working set 4× RAM, vs fastcgi_cache: ≥ 0.8×", f(2, r)+"×", yesNo(r >= 0.8))
	}
	for _, r := range filter(rows, "upgrade") {
		t.add("upgrade under load: 0 errors", d(float64(r.Errors)), yesNo(r.Errors == 0))
		pct := paramNum(r, "origin_pct")
		t.add("upgrade under load: ≤ 1 % of the pages from the origin", f(2, pct)+" %", yesNo(pct <= 1))
	}
	for _, r := range filter(rows, "start") {
		s := paramNum(r, "first_hit_s")
		t.add("first hit after a start: ≤ 2 s", f(2, s)+" s", yesNo(r.Check == "ok" && s <= 2))
	}
	return t.String()
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// checkCell is a row's check: "ok", or what failed in bold.
func checkCell(c string) string {
	if c == "ok" || c == "hit" || c == "" {
		return dash(c)
	}
	return bold(c)
}

func diskSection(d *runData) (string, error) {
	g := d.groups["disk"]
	if g == nil {
		return "", nil
	}
	tables := ""
	if g["skip"] == "" {
		rows := d.rows["disk"]
		tables = diskWS(rows).String() + "\n" + diskUpgrade(rows).String() + "\n" + diskStart(rows).String() + "\n" + diskTargets(rows)
	}
	return render("disk.tmpl", d, g, map[string]string{"tables": tables})
}
