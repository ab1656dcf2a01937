package top

import (
	"fmt"
	"strings"

	"github.com/ramjet-proxy/ramjet/internal/termtext"
)

// MinWidth is the narrowest terminal the view fits; a narrower one gets
// its lines cut.
const MinWidth = 80

// siteCols is the width of a site row's columns after the name.
const siteCols = 44

// Render draws f for a terminal of width by height: lines no longer than
// width, at most height of them. The sites take the rows the pools and
// the header leave; those that do not fit are counted on the last line.
func Render(f Frame, admin string, width, height int) []string {
	width = max(width, 20)
	var head, tail []string
	head = append(head, reverse(fmt.Sprintf("ramjet top  %s  %s  conns %d (parked %d)", shown(admin), f.At.Format("15:04:05"),
		f.Conns, f.Parked), width))
	if f.Err != nil {
		head = append(head, "error: "+shown(f.Err.Error()))
	}
	nameW := max(width-siteCols, 8)
	head = append(head, fmt.Sprintf("%-*s %9s %6s %9s %7s %7s", nameW, "SITE", "REQ/S", "HIT%", "ORIGIN ms", "ERR/m", "WAF/m"))
	if len(f.Pools) > 0 {
		tail = append(tail, "", fmt.Sprintf("%-*s %6s %6s %6s %7s", nameW, "PHP POOL", "BUSY", "IDLE", "SUSP", "QUEUED"))
		for _, p := range f.Pools {
			tail = append(tail, fmt.Sprintf("%-*s %6d %6d %6d %7d", nameW, cut(shown(p.Name), nameW), p.Busy, p.Idle, p.Suspended, p.Queued))
		}
	}
	tail = append(tail, "sort "+keyNames[f.Sort]+"  keys: r req/s  h hit%  l origin  e err  w waf  n name  q quit")
	room := height - len(head) - len(tail)
	rows := f.Rows
	if len(rows) > room {
		rows = rows[:max(room-1, 0)]
	}
	lines := head
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%-*s %9.1f %5.1f%% %9s %7d %7d", nameW, cut(shown(r.Name), nameW), r.ReqPerSec,
			100*r.HitRatio, ms(r), r.Errors, r.WAF))
	}
	if hidden := len(f.Rows) - len(rows); hidden > 0 {
		lines = append(lines, fmt.Sprintf("… %d more sites", hidden))
	}
	lines = append(lines, tail...)
	for i := range lines {
		lines[i] = cut(lines[i], width)
	}
	if len(lines) > height {
		lines = lines[:height]
	}
	return lines
}

// shown is a string the admin listener sent (or the command line gave),
// as the view may write it to the terminal: its control characters as
// visible escapes, so that none of them reaches the terminal, which would
// obey them (a name or an error body could set the window title or
// clear the screen).
func shown(s string) string { return termtext.Clean(s, "") }

func ms(r Row) string {
	if r.Latency == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(r.Latency.Microseconds())/1000)
}

// cut shortens s to n runes, ending with "…" when it was longer.
func cut(s string, n int) string {
	if strings.HasPrefix(s, esc) { // a reversed header: cut its text only
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

const esc = "\x1b["

// reverse is s in reverse video, padded to width.
func reverse(s string, width int) string {
	return esc + "7m" + fmt.Sprintf("%-*s", width, cut(s, width)) + esc + "0m"
}
