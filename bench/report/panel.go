package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// bar is one bar of a grouped-bar panel: its cluster on the x axis, its
// series (colour and key), the value and its printed label, and an optional
// whisker lo..hi.
type bar struct {
	cluster, series string
	value           float64
	label           string
	whisker         bool
	lo, hi          float64
}

// q quotes s for gnuplot.
func q(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
	return `"` + s + `"`
}

var colours = []struct {
	match *regexp.Regexp
	rgb   string
}{
	{regexp.MustCompile(`^ramjet.*(plain|HTTP/1\.1|docroot.*cookie)`), "#F5A55B"},
	{regexp.MustCompile(`php-fpm.*cookie`), "#8DB6F5"},
	{regexp.MustCompile(`^ramjet`), "#D9600B"},
	{regexp.MustCompile(`fastcgi_cache`), "#2E9E4F"},
	{regexp.MustCompile(`php-fpm`), "#1A6FD8"},
	{regexp.MustCompile(`^nginx.*HTTP/1\.1`), "#8DB6F5"},
	{regexp.MustCompile(`^nginx`), "#1A6FD8"},
	{regexp.MustCompile(`Varnish`), "#8E3FD6"},
}

// colour is a series' colour: ramjet orange, nginx blue, fastcgi_cache
// green, Varnish purple; lighter for the secondary rows of each.
func colour(series string) string {
	for _, c := range colours {
		if c.match.MatchString(series) {
			return c.rgb
		}
	}
	return "#888888"
}

// panel is the gnuplot commands of one grouped-bar plot; "" without bars.
func panel(id, ylabel, title string, logy bool, bars []bar) string {
	if len(bars) == 0 {
		return ""
	}
	var clusters, names []string
	ci, si := map[string]int{}, map[string]int{}
	ymax, ymin := 0.0, math.Inf(1)
	for _, b := range bars {
		if _, ok := ci[b.cluster]; !ok {
			ci[b.cluster] = len(clusters)
			clusters = append(clusters, b.cluster)
		}
		if _, ok := si[b.series]; !ok {
			si[b.series] = len(names) + 1
			names = append(names, b.series)
		}
		ymax = max(ymax, b.top())
		ymin = min(ymin, b.value)
	}
	ns := len(names)
	bw := 0.8 / float64(ns)
	var s strings.Builder
	fmt.Fprintf(&s, "$d%s << EOD\n", id)
	for _, b := range bars {
		x := float64(ci[b.cluster]) + (float64(si[b.series])-float64(ns+1)/2)*bw
		lo, hi := "?", "?"
		if b.whisker {
			lo, hi = num(b.lo), num(b.hi)
		}
		fmt.Fprintf(&s, "%.4f\t%s\t%s\t%s\t%d\t%s\t%s\n", x, num(b.value), lo, hi, si[b.series], b.label, num(b.top()))
	}
	s.WriteString("EOD\n")
	fmt.Fprintf(&s, "set title %s\nset ylabel %s\nset boxwidth %.4f absolute\nset xrange [-0.5:%.1f]\n",
		q(title), q(ylabel), bw*0.92, float64(len(clusters))-0.5)
	var xt []string
	for i, c := range clusters {
		xt = append(xt, fmt.Sprintf("%s %d", q(strings.Replace(c, " (", "\n(", 1)), i))
	}
	s.WriteString("set xtics (" + strings.Join(xt, ", ") + ")\n")
	if logy {
		lo := 1.0
		for lo > ymin {
			lo /= 10
		}
		for lo*10 <= ymin/2 {
			lo *= 10
		}
		fmt.Fprintf(&s, "set logscale y\nset yrange [%s:%s]\n", g6(lo), g6(ymax*4))
	} else {
		fmt.Fprintf(&s, "unset logscale y\nset yrange [0:%s]\n", g6(ymax*1.15))
	}
	cmd := "plot"
	for i, n := range names {
		cmd += fmt.Sprintf(" $d%s using ($5==%d?$1:NaN):2 with boxes lc rgb %s title %s,", id, i+1, q(colour(n)), q(n))
	}
	// whiskers lo..hi with caps (vectors: yerrorbars would mark the median with a dot)
	cw := bw * 0.12
	cmd += fmt.Sprintf(" $d%s using 1:3:(0):($4-$3) with vectors nohead lc rgb \"#333333\" lw 1.2 notitle,", id)
	cmd += fmt.Sprintf(" $d%s using ($1-%g):3:(%g):(0) with vectors nohead lc rgb \"#333333\" lw 1.2 notitle,", id, cw, 2*cw)
	cmd += fmt.Sprintf(" $d%s using ($1-%g):4:(%g):(0) with vectors nohead lc rgb \"#333333\" lw 1.2 notitle,", id, cw, 2*cw)
	cmd += fmt.Sprintf(" $d%s using 1:7:6 with labels offset 0,0.7 font \",9\" notitle", id)
	s.WriteString(cmd + "\n")
	return s.String()
}

// g6 prints an axis bound to 6 significant digits (13.8, not 13.799999999999999).
func g6(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// top is where the bar's label sits: above the whisker when there is one.
func (b bar) top() float64 {
	if b.whisker && b.hi > b.value {
		return b.hi
	}
	return b.value
}
