package main

import (
	"fmt"
	"strconv"
	"strings"
)

// table is a Markdown table; a column whose header ends in "|r" is
// right-aligned (the "|r" is not printed).
type table struct {
	head  []string
	right []bool
	rows  [][]string
}

func newTable(cols ...string) *table {
	t := &table{}
	for _, c := range cols {
		r := strings.HasSuffix(c, "|r")
		t.head = append(t.head, strings.TrimSuffix(c, "|r"))
		t.right = append(t.right, r)
	}
	return t
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) String() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.head, " | ") + " |\n|")
	for _, r := range t.right {
		if r {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, row := range t.rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	return b.String()
}

// f formats a number the way the tables print it: f(0, v) = "%.0f".
func f(prec int, v float64) string { return fmt.Sprintf("%.*f", prec, v) }

func d(v float64) string { return fmt.Sprintf("%d", int64(v)) }

// rangeOf is "min–max" of f over the series at a precision.
func rangeOf(s series, prec int, g func(Record) float64) string {
	return f(prec, s.min(g)) + "–" + f(prec, s.max(g))
}

// mib is kB as MiB with one decimal.
func mib(kb float64) string { return f(1, kb/1024) }

// bold marks a failed check.
func bold(s string) string { return "**" + s + "**" }

// num is the shortest decimal form of v (2, 2.5): for whole-millisecond tools.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// labels names contenders for a table; a contender without one is shown
// by its id.
type labels map[string]string

func (l labels) of(c string) string {
	if v, ok := l[c]; ok {
		return v
	}
	return c
}
