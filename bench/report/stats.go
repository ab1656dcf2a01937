package main

import (
	"slices"
	"sort"
	"strings"
)

// median of v (the mean of the middle two for an even count); 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func minOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Min(v)
}

func maxOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Max(v)
}

// ratio is a ÷ b, 0 when b is not positive (a contender that did not run).
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// lossMargin: ramjet "loses" a column when it is worse by more than this.
const lossMargin = 0.02

// cmp is one column of a ratio table: ramjet ÷ the contender, and which
// direction is better for ramjet.
type cmp struct {
	name         string
	ratio        float64
	higherBetter bool
}

// loses reports whether ramjet is worse than the contender by more than the
// margin on this column.
func (c cmp) loses() bool {
	if c.higherBetter {
		return c.ratio < 1-lossMargin
	}
	return c.ratio > 1+lossMargin
}

// losses is the "where ramjet loses" cell: the columns ramjet loses, in bold,
// or "–".
func losses(cs ...cmp) string {
	var names []string
	for _, c := range cs {
		if c.loses() {
			names = append(names, c.name)
		}
	}
	if len(names) == 0 {
		return "–"
	}
	return "**" + strings.Join(names, ", ") + "**"
}

// series is the rows of one key (a contender on a page, …) in file order.
type series struct {
	key  string
	rows []Record
}

// groupBy splits rows by key, keeping the order in which keys first appear.
func groupBy(rows []Record, key func(Record) string) []series {
	var out []series
	at := map[string]int{}
	for _, r := range rows {
		k := key(r)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, series{key: k})
		}
		out[i].rows = append(out[i].rows, r)
	}
	return out
}

// find is the series of key, or nil.
func find(ss []series, key string) *series {
	for i := range ss {
		if ss[i].key == key {
			return &ss[i]
		}
	}
	return nil
}

// vals is f of every row.
func (s series) vals(f func(Record) float64) []float64 {
	out := make([]float64, len(s.rows))
	for i, r := range s.rows {
		out[i] = f(r)
	}
	return out
}

func (s series) med(f func(Record) float64) float64 { return median(s.vals(f)) }
func (s series) max(f func(Record) float64) float64 { return maxOf(s.vals(f)) }
func (s series) min(f func(Record) float64) float64 { return minOf(s.vals(f)) }

func (s series) sum(f func(Record) float64) float64 {
	t := 0.0
	for _, r := range s.rows {
		t += f(r)
	}
	return t
}

// hitCell is a cache contender's check cell: "hit", "n/a (file)" for the
// static file, or the failed check in bold.
func (s series) hitCell() string {
	if n := s.note("hit", "n/a"); n != "" {
		return bold(n)
	}
	if s.key == "static" {
		return "n/a (file)"
	}
	return "hit"
}

// note is the last check of the series that is not one of ok, or "".
func (s series) note(ok ...string) string {
	n := ""
	for _, r := range s.rows {
		good := false
		for _, o := range ok {
			good = good || r.Check == o
		}
		if !good {
			n = r.Check
		}
	}
	return n
}

// Field getters, shared by the sections' tables.
func rps(r Record) float64        { return r.RPS }
func p50(r Record) float64        { return r.P50 }
func p90(r Record) float64        { return r.P90 }
func p99(r Record) float64        { return r.P99 }
func p999(r Record) float64       { return r.P999 }
func maxMS(r Record) float64      { return r.Max }
func meanMS(r Record) float64     { return r.Mean }
func sdMS(r Record) float64       { return r.SD }
func cpu(r Record) float64        { return r.CPU }
func phpCPU(r Record) float64     { return r.PHPCPU }
func rssKB(r Record) float64      { return r.RSS }
func other(r Record) float64      { return r.Other }
func loadBusy(r Record) float64   { return r.LoadBusy }
func serverBusy(r Record) float64 { return r.ServerBusy }
func errs(r Record) float64       { return float64(r.Errors) }
func reqs(r Record) float64       { return float64(r.Requests) }
