package main

import (
	"fmt"
	"strings"
)

// chart is one PNG: its file name, size and gnuplot script (without the
// terminal); an empty script means its rows are missing from this run.
type chart struct {
	name          string
	width, height int
	script        string
	missing       string // why it has no script
}

// source names the run in every chart's title.
func source(d *runData) string {
	s := "bench/run of " + d.run["date"]
	if c := d.run["commit"]; c != "" {
		s += " (commit " + strings.Fields(c)[0] + ")"
	}
	return s
}

func multiplotTitle(lines ...string) string {
	return "set multiplot title " + q(strings.Join(lines, "\n")) + " font \",12\"\n"
}

// reqBars: median req/s with min–max whiskers of each series, in cluster.
func reqBars(cluster string, ss []series, label func(string) string) []bar {
	var out []bar
	for _, s := range ss {
		out = append(out, bar{cluster: cluster, series: label(s.key), value: s.med(rps), label: f(0, s.med(rps)),
			whisker: true, lo: s.min(rps), hi: s.max(rps)})
	}
	return out
}

func rowsOf(d *runData, group string, keep func(Record) bool) []Record {
	var out []Record
	for _, r := range d.rows[group] {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func cachedChart(d *runData) chart {
	c := chart{name: "cached.png", width: 1500, height: 650}
	g := d.groups["cache"]
	type part struct {
		bars  []bar
		title string
		width int
	}
	var parts []part
	var left []bar
	clusters := 0
	for _, page := range d.words("cache", "pages") {
		ss := groupBy(rowsOf(d, "cache", func(r Record) bool { return r.Workload == page }), func(r Record) string { return r.Contender })
		if len(ss) == 0 {
			continue
		}
		label := func(k string) string { return cacheLabelOf(k, page) }
		switch page {
		case "2m":
			parts = append(parts, part{reqBars(pageTitle(page, g), ss, label), "2 MiB file (cached)", 2})
		case "esi":
			title, _, _ := strings.Cut(pageTitle(page, g), ",")
			parts = append(parts, part{reqBars(title, ss, label), "ESI page, 3 includes (1 private per user)", 3})
		default:
			left = append(left, reqBars(pageTitle(page, g), ss, label)...)
			clusters++
		}
	}
	if len(left) > 0 {
		parts = append([]part{{left, "cached pages (every request a cache hit)", 2 * clusters}}, parts...)
	}
	if len(parts) == 0 {
		c.missing = "no cache-section rows"
		return c
	}
	total := 0
	for _, p := range parts {
		total += p.width
	}
	var s strings.Builder
	s.WriteString(multiplotTitle("Cached pages over HTTP/1.1: req/s",
		fmt.Sprintf("load: wrk -t1 -c%s -d%s --latency; median of %s round(s), whiskers min–max", d.run["conns"], d.run["duration"], d.run["rounds"]),
		source(d)))
	x := 0.0
	for i, p := range parts {
		w := float64(p.width) / float64(total)
		fmt.Fprintf(&s, "set size %.4f,0.85\nset origin %.4f,0\n", w, x)
		s.WriteString(panel(fmt.Sprint(i+1), "req/s", p.title, false, p.bars))
		x += w
	}
	c.script = s.String()
	return c
}

func phpCharts(d *runData) []chart {
	reqsC := chart{name: "php-reqs.png", width: 1100, height: 650}
	lat := chart{name: "php-latency.png", width: 1400, height: 650}
	g := d.groups["php"]
	ss := groupBy(d.rows["php"], pageKey)
	if g == nil || len(ss) == 0 {
		reqsC.missing, lat.missing = "no PHP rows", "no PHP rows"
		return []chart{reqsC, lat}
	}
	var rb, b50, b99 []bar
	for _, page := range d.words("php", "pages") {
		for _, c := range phpOrder {
			s := find(ss, page+"/"+c)
			if s == nil {
				continue
			}
			t, l := phpTitle[page], phpLabel[c]
			rb = append(rb, bar{t, l, s.med(rps), f(0, s.med(rps)), true, s.min(rps), s.max(rps)})
			b50 = append(b50, bar{cluster: t, series: l, value: s.med(p50), label: f(3, s.med(p50))})
			b99 = append(b99, bar{t, l, s.med(p99), f(3, s.med(p99)), true, s.med(p99), s.max(p99)})
		}
	}
	src := fmt.Sprintf("uncached, %s PHP workers on each side; load: wrk -t1 -c%s -d%s --latency; median of %s round(s)",
		g["workers"], g["conns"], d.run["duration"], d.run["rounds"])
	reqsC.script = "set size 1,0.85\nset origin 0,0\n" +
		multiplotTitle("PHP: ramjet docroot mode (php-cgi pool) vs nginx + php-fpm: req/s", src+", whiskers min–max", source(d)) +
		panel("1", "req/s", "every request runs PHP", false, rb)
	lat.script = multiplotTitle("PHP: ramjet docroot mode (php-cgi pool) vs nginx + php-fpm: latency", src, source(d)) +
		"set size 0.5,0.85\nset origin 0,0\nset format y \"%g\"\n" +
		panel("1", "ms", "p50 (median over the rounds)", false, b50) +
		"set origin 0.5,0\n" +
		panel("2", "ms", "p99 (median over the rounds; whisker up to the worst round)", false, b99)
	return []chart{reqsC, lat}
}

func wpChart(d *runData) chart {
	c := chart{name: "wordpress.png", width: 1100, height: 650}
	g := d.groups["wp"]
	ss := groupBy(d.rows["wp"], pageKey)
	if g == nil || len(ss) == 0 {
		c.missing = "no WordPress rows"
		return c
	}
	var bars []bar
	for _, page := range d.words("wp", "pages") {
		cluster := page
		if x, r := find(ss, page+"/fpm"), find(ss, page+"/cached"); x != nil && r != nil {
			cluster += fmt.Sprintf(" (cached ÷ uncached %s×)", f(0, ratio(r.med(rps), x.med(rps))))
		}
		for _, k := range wpOrder {
			if s := find(ss, page+"/"+k); s != nil {
				bars = append(bars, bar{cluster, wpLabel[k], s.med(rps), rate(s.med(rps)), true, s.min(rps), s.max(rps)})
			}
		}
	}
	c.script = "set size 1,0.85\nset origin 0,0\n" +
		multiplotTitle("WordPress: uncached nginx + php-fpm (and ramjet docroot, when measured) vs cached through ramjet: req/s, log scale",
			fmt.Sprintf("load: wrk -t1 -c%s -d%s --timeout %s --latency; median of %s round(s), whiskers min–max", g["conns"], d.run["duration"], g["timeout"], d.run["rounds"]),
			source(d)) +
		"set format y \"%g\"\n" +
		panel("1", "req/s (log scale)", "Debian's WordPress "+g["wp_version"]+": home and a post", true, bars)
	return c
}

func h2Charts(d *runData) []chart {
	c := chart{name: "h2.png", width: 1500, height: 650}
	rc := chart{name: "h2-rss.png", width: 1000, height: 650}
	ss := groupBy(d.rows["h2"], h2Key)
	if len(ss) == 0 {
		c.missing, rc.missing = "no h2 rows", "no h2 rows"
		return []chart{c, rc}
	}
	var pages []string
	for _, p := range h2Pages {
		for _, s := range ss {
			if strings.HasPrefix(s.key, p+"/") {
				pages = append(pages, p)
				break
			}
		}
	}
	var s strings.Builder
	s.WriteString(multiplotTitle(
		fmt.Sprintf("TLS 1.3 + HTTP/2 and HTTP/1.1 over TLS: ramjet vs nginx, req/s (median of %s round(s), whiskers min–max)", d.run["rounds"]),
		"load: h2load -t1 -c100 -n100000 -m10 (2 MiB file: -n1000), --h1 for HTTP/1.1", source(d)))
	// one key for the panels, under the title; the same top margin in every panel
	s.WriteString("set key at screen 0.5,0.86 center top horizontal\nset tmargin 4\n")
	w := 1 / float64(len(pages))
	for i, page := range pages {
		if i > 0 {
			s.WriteString("unset key\n")
		}
		var bars []bar
		for _, proto := range h2Protos {
			for _, k := range h2Order {
				if x := find(ss, page+"/"+proto+"/"+k); x != nil {
					bars = append(bars, bar{h2Title[page], h2Label[k] + ", " + h2Proto(proto), x.med(rps), f(0, x.med(rps)), true, x.min(rps), x.max(rps)})
				}
			}
		}
		fmt.Fprintf(&s, "set size %.4f,0.8\nset origin %.4f,0\n", w, float64(i)*w)
		s.WriteString(panel(fmt.Sprint(i), "req/s", h2Title[page], false, bars))
	}
	c.script = s.String()
	rows := d.rows["h2rss"]
	if len(rows) == 0 {
		rc.missing = "no RSS rows of the h2 connections"
		return []chart{c, rc}
	}
	var bars []bar
	for _, r := range rows {
		bars = append(bars, bar{cluster: "RSS before", series: h2Label[r.Contender], value: r.BaseRSS / 1024, label: mib(r.BaseRSS)})
	}
	for _, r := range rows {
		bars = append(bars, bar{cluster: "peak RSS", series: h2Label[r.Contender], value: r.PeakRSS / 1024, label: mib(r.PeakRSS)})
	}
	g := d.groups["h2"]
	rc.script = "set size 1,0.85\nset origin 0,0\n" +
		multiplotTitle("TLS + HTTP/2: RSS with "+g["idle_conns"]+" h2 connections open", "RSS summed over the server's processes", source(d)) +
		"set format y \"%g\"\n" +
		panel("1", "MiB", "before: a second before they open; peak: sampled every 0.25 s while open", false, bars)
	return []chart{c, rc}
}

func tailChart(d *runData) chart {
	c := chart{name: "tail.png", width: 1100, height: 650}
	g := d.groups["tail"]
	ss := groupBy(d.rows["tail"], func(r Record) string { return r.Contender })
	if g == nil || len(ss) == 0 {
		c.missing = "no tail rows"
		return c
	}
	var bars []bar
	for _, p := range []struct {
		name string
		get  func(Record) float64
	}{{"p50", p50}, {"p99", p99}} {
		for _, s := range ss {
			bars = append(bars, bar{cluster: p.name, series: cacheLabel[s.key], value: s.med(p.get), label: f(3, s.med(p.get))})
		}
	}
	for _, s := range ss {
		bars = append(bars, bar{"p99.9", cacheLabel[s.key], s.med(p999), f(3, s.med(p999)), true, s.med(p999), s.max(p999)})
	}
	c.script = "set size 1,0.85\nset origin 0,0\n" +
		multiplotTitle("Tail latency at "+g["conns"]+" concurrent connections: latency percentiles, log scale",
			fmt.Sprintf("load: wrk -t1 -c%s -d%s --timeout %s --latency -s pctl.lua; median of %s round(s), p99.9 whisker up to the worst round",
				g["conns"], d.run["duration"], g["timeout"], d.run["rounds"]), source(d)) +
		"set format y \"%g\"\n" +
		panel("1", "ms (log scale)", "every request a cache hit on the 725 B page (nginx static: the file)", true, bars)
	return c
}

func idleChart(d *runData) chart {
	c := chart{name: "idle-rss.png", width: 1100, height: 650}
	g := d.groups["idle"]
	vs, steps := idleServers(d.rows["idle"])
	if g == nil || len(vs) == 0 {
		c.missing = "no idle rows"
		return c
	}
	var data, plot strings.Builder
	for i, v := range vs {
		fmt.Fprintf(&data, "$s%d << EOD\n", i)
		last := -1
		for j, n := range steps {
			if _, ok := v.steps[n]; ok {
				last = j
			}
		}
		for j, n := range steps {
			kb, ok := v.steps[n]
			if !ok {
				continue
			}
			label := ""
			if j == last { // the value as a label on the last point only
				label = mib(kb) + " MiB"
			}
			fmt.Fprintf(&data, "%d\t%s\t%s\n", n, mib(kb), label)
		}
		data.WriteString("EOD\n")
		if i > 0 {
			plot.WriteString(", ")
		}
		fmt.Fprintf(&plot, "$s%d using 1:2 with linespoints lw 2 pt 7 lc rgb %s title %s, $s%d using 1:2:3 with labels right offset -0.8,0.9 font \",9\" notitle",
			i, q(colour(cacheLabel[v.key])), q(cacheLabel[v.key]), i)
	}
	c.script = data.String() +
		multiplotTitle("RSS at "+g["conns"]+" idle keep-alive connections: RSS against connections open",
			"RSS summed over the server's processes; each connection made one request (725 B page), then stays idle", source(d)) +
		"set size 1,0.85\nset origin 0,0\nset xlabel \"idle keep-alive connections open\"\nset ylabel \"MiB\"\n" +
		"set format y \"%g\"\nset xtics scale 1\nset yrange [0:*]\nset xrange [0:*]\n" +
		"plot " + plot.String() + "\n"
	return c
}

// charts is every chart of the run, in a fixed order.
func charts(d *runData) []chart {
	out := []chart{cachedChart(d)}
	out = append(out, phpCharts(d)...)
	out = append(out, wpChart(d))
	out = append(out, h2Charts(d)...)
	return append(out, tailChart(d), idleChart(d), warmChart(d))
}
