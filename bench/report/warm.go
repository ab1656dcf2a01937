package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The warm-up group (issue 30): a 2,000-page PHP site behind ramjet under
// Zipf visitors, a purge of everything, and the visitors' hit ratio
// second by second after it, with the warm-up after purges on and off
// (contenders ramjet_warm_on, ramjet_warm_off). A row's "ratios" is the
// window's per-second hit ratios, space-separated.

var warmLabels = map[string]string{
	"ramjet_warm_on":  "ramjet, warm-up on",
	"ramjet_warm_off": "ramjet, warm-up off (default)",
}

// warmColours tell the two ramjets apart (colour() gives both ramjet's).
var warmColours = map[string]string{"ramjet_warm_on": "#D9600B", "ramjet_warm_off": "#555555"}

// warmRatios is a row's per-second hit ratios.
func warmRatios(r Record) []float64 {
	var out []float64
	for _, w := range strings.Fields(r.param("ratios")) {
		v, err := strconv.ParseFloat(w, 64)
		if err != nil {
			v = 0
		}
		out = append(out, v)
	}
	return out
}

// recovered is the first second from which the ratio stays at least
// within 1 % of before; -1 when it never does.
func recovered(ratios []float64, before float64) int {
	at := -1
	for i, v := range ratios {
		switch {
		case v < before-0.01:
			at = -1
		case at < 0:
			at = i + 1
		}
	}
	return at
}

func warmTable(rows []Record) *table {
	t := newTable("round|r", "warm-up", "hit ratio before|r", "first 10 s|r", "whole window|r", "lowest second|r",
		"back within 1 % after|r", "origin peak (PHP at once)|r", "warm-up fetches|r", "visitor requests|r")
	for _, r := range rows {
		rs := warmRatios(r)
		low := 1.0
		for _, v := range rs {
			low = min(low, v)
		}
		back := "never"
		if s := recovered(rs, paramNum(r, "ratio_before")); s > 0 {
			back = fmt.Sprintf("%d s", s)
		}
		t.add(strconv.Itoa(r.Round), warmLabels[r.Contender], pct(paramNum(r, "ratio_before")), pct(paramNum(r, "ratio_10s")),
			pct(paramNum(r, "ratio_window")), pct(low), back, d(paramNum(r, "origin_peak")), d(paramNum(r, "warm_fetches")),
			d(float64(r.Requests)))
	}
	return t
}

func pct(v float64) string { return f(1, 100*v) + " %" }

func warmSection(d *runData) (string, error) {
	g := d.groups["warm"]
	if g == nil {
		return "", nil
	}
	tables := ""
	if g["skip"] == "" {
		tables = warmTable(d.rows["warm"]).String() + "\n"
	}
	return render("warm.tmpl", d, g, map[string]string{"tables": tables})
}

// warmChart plots each variant's per-second hit ratio after the purge
// (its last round).
func warmChart(d *runData) chart {
	c := chart{name: "warm.png", width: 1100, height: 600}
	g := d.groups["warm"]
	last := map[string]Record{}
	var order []string
	for _, r := range d.rows["warm"] {
		if _, ok := last[r.Contender]; !ok {
			order = append(order, r.Contender)
		}
		last[r.Contender] = r
	}
	if g == nil || len(order) == 0 {
		c.missing = "no warm rows"
		return c
	}
	var data, plot strings.Builder
	for i, k := range order {
		fmt.Fprintf(&data, "$s%d << EOD\n", i)
		for s, v := range warmRatios(last[k]) {
			fmt.Fprintf(&data, "%d\t%.2f\n", s+1, 100*v)
		}
		data.WriteString("EOD\n")
		if i > 0 {
			plot.WriteString(", ")
		}
		fmt.Fprintf(&plot, "$s%d using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb %s title %s", i, q(warmColours[k]), q(warmLabels[k]))
	}
	c.script = data.String() +
		multiplotTitle("Visitors' hit ratio after a purge of everything, second by second",
			fmt.Sprintf("%s pages, Zipf visitors (wrk -c%s, %s ms between a connection's requests), pages of %s ms of PHP",
				g["pages"], g["conns"], g["delay_ms"], g["page_ms"]), source(d)) +
		"set size 1,0.85\nset origin 0,0\nset xlabel \"seconds after the purge\"\nset ylabel \"hit ratio %\"\n" +
		"set key inside bottom right\nset yrange [*:100]\nset xrange [0:*]\n" +
		"plot " + plot.String() + "\n"
	return c
}
