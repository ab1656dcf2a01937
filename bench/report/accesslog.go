package main

import (
	"strconv"
)

// The access log group: ramjet's hit path with the access log off and
// on, each format a contender ("ramjet_log_<format>").

const logContender = "ramjet_log_"

func logFormatOf(s series) string { return s.key[len(logContender):] }

func logLabel(format string) string {
	if format == "off" {
		return "ramjet, access log off"
	}
	return "ramjet, access log " + format
}

// paramNum is a numeric field of a row that Record has no field for
// (log_lines, dropped); 0 when absent.
func paramNum(r Record, k string) float64 {
	v, err := strconv.ParseFloat(r.param(k), 64)
	if err != nil {
		return 0
	}
	return v
}

func accesslogTable(ss []series) *table {
	off := find(ss, logContender+"off")
	t := newTable("server", "req/s (median)|r", "req/s (min–max)|r", "req/s vs off|r", "p50 ms|r", "p99 ms|r",
		"server CPU µs/req|r", "CPU µs/req vs off|r", "peak RSS MiB|r", "lines in the log|r", "lines dropped|r",
		"errors|r", "hit check")
	for _, s := range ss {
		vsRPS, vsCPU := "–", "–"
		if off != nil && s.key != off.key {
			vsRPS = f(3, ratio(s.med(rps), off.med(rps)))
			vsCPU = f(3, ratio(s.med(cpu), off.med(cpu)))
		}
		last := s.rows[len(s.rows)-1]
		lines := "–"
		if logFormatOf(s) != "off" {
			lines = d(paramNum(last, "log_lines"))
		}
		t.add(logLabel(logFormatOf(s)), f(0, s.med(rps)), rangeOf(s, 0, rps), vsRPS, f(3, s.med(p50)), f(3, s.med(p99)),
			f(2, s.med(cpu)), vsCPU, mib(s.max(rssKB)), lines, d(paramNum(last, "dropped")), d(s.sum(errs)), s.hitCell())
	}
	return t
}

// accesslogTarget is issue 15's: the log on costs at most 10 % of the
// hit path's req/s.
func accesslogTarget(ss []series) string {
	off := find(ss, logContender+"off")
	if off == nil {
		return ""
	}
	t := newTable("access log", "req/s vs off|r", "target (issue 15)", "met")
	for _, s := range ss {
		if s.key == off.key {
			continue
		}
		r := ratio(s.med(rps), off.med(rps))
		t.add(logFormatOf(s), f(3, r), "≥ 0.90 (≤ 10 % fewer req/s)", yesNo(r >= 0.9))
	}
	return t.String() + "\n"
}

func accesslogSection(d *runData) (string, error) {
	g := d.groups["accesslog"]
	if g == nil {
		return "", nil
	}
	tables := ""
	if g["skip"] == "" {
		ss := groupBy(d.rows["accesslog"], func(r Record) string { return r.Contender })
		tables = accesslogTable(ss).String() + "\n" + accesslogTarget(ss)
	}
	return render("accesslog.tmpl", d, g, map[string]string{"tables": tables})
}
