package main

import (
	"fmt"
	"strings"
)

// The h2 group: ramjet's TLS listener against nginx with TLS + HTTP/2.
var (
	h2Label  = map[string]string{"ramjet": "ramjet (cached)", "nginx": "nginx static file"}
	h2Title  = map[string]string{"725": "725 B page", "30k": "30 KB page", "2m": "2 MiB file"}
	h2Pages  = []string{"725", "30k", "2m"}
	h2Protos = []string{"h2", "h1", "h3"}
	h2Order  = []string{"ramjet", "nginx"}
)

func h2Proto(p string) string {
	switch p {
	case "h2":
		return "h2"
	case "h3":
		return "h3 (h3load)"
	}
	return "HTTP/1.1 (--h1)"
}

func h2Key(r Record) string { return r.Workload + "/" + r.Proto + "/" + r.Contender }

func h2Table(ss []series) *table {
	t := newTable("page", "protocol", "server", "req/s (median)|r", "req/s (min–max)|r", "mean ms|r", "sd ms|r",
		"max ms (worst)|r", "server CPU µs/req|r", "peak RSS MiB|r", "B/req (data)|r", "requests ok|r",
		"failed or not 2xx|r", "origin PHP calls|r", "other load on server core, max %|r", "h2load core busy, max %|r",
		"TLS (h2load)", "check")
	for _, page := range h2Pages {
		for _, proto := range h2Protos {
			for _, c := range h2Order {
				s := find(ss, page+"/"+proto+"/"+c)
				if s == nil {
					continue
				}
				last := s.rows[len(s.rows)-1]
				chk, calls := "ok", "–"
				if c == "ramjet" {
					chk = "hit"
					calls = d(s.sum(func(r Record) float64 { return phpCallsOf(r) }))
				}
				if n := s.note("ok", "hit"); n != "" {
					chk = bold(n)
				}
				t.add(h2Title[page], h2Proto(proto), h2Label[c], f(0, s.med(rps)), rangeOf(*s, 0, rps), f(3, s.med(meanMS)),
					f(3, s.med(sdMS)), f(3, s.max(maxMS)), f(2, s.med(cpu)), mib(s.max(rssKB)), fmt.Sprint(last.Bytes),
					d(s.sum(reqs)), d(s.sum(func(r Record) float64 { return float64(r.Failed) })), calls,
					d(s.max(other)), d(s.max(loadBusy)), last.TLS, chk)
			}
		}
	}
	return t
}

func phpCallsOf(r Record) float64 {
	if r.PHPCalls == nil {
		return 0
	}
	return *r.PHPCalls
}

func h2RatioTable(ss []series) string {
	t := newTable("page", "protocol", "req/s ×|r", "mean time ×|r", "CPU µs/req ×|r", "target (issue 7)", "met")
	for _, page := range h2Pages {
		for _, proto := range h2Protos[:2] { // nginx has no h3: h3OverH2
			r, x := find(ss, page+"/"+proto+"/ramjet"), find(ss, page+"/"+proto+"/nginx")
			target := "–"
			if page != "2m" && proto == "h2" {
				target = "≥ 1.0× req/s"
			}
			if r == nil || x == nil {
				if r != nil || x != nil {
					t.add(h2Title[page], proto, "–", "–", "–", target, "not measured")
				}
				continue
			}
			rr := ratio(r.med(rps), x.med(rps))
			met := "–"
			if target != "–" {
				met = yesNo(rr >= 1.0)
			}
			t.add(h2Title[page], h2Proto(proto), f(2, rr), f(2, ratio(r.med(meanMS), x.med(meanMS))),
				f(2, ratio(r.med(cpu), x.med(cpu))), target, met)
		}
	}
	return "ramjet ÷ nginx (medians; req/s above 1 = ramjet faster, mean time and CPU/req below 1 = ramjet better). " +
		"Target (issue 7): ≥ 1.0× nginx req/s on the cached pages over h2.\n\n" + t.String() + "\n"
}

// h3OverH2 sets ramjet's HTTP/3 beside its own HTTP/2 (nginx 1.22 has no
// QUIC): issue 20's target is h3 ≥ 0.5× h2 req/s.
func h3OverH2(ss []series) string {
	t := newTable("page", "req/s h3 ÷ h2|r", "CPU µs/req h3|r", "CPU µs/req h2|r", "CPU µs/req h3 ÷ h2|r", "target (issue 20)", "met")
	for _, page := range h2Pages {
		a3, a2 := find(ss, page+"/h3/ramjet"), find(ss, page+"/h2/ramjet")
		if a3 == nil || a2 == nil {
			continue
		}
		rr := ratio(a3.med(rps), a2.med(rps))
		t.add(h2Title[page], f(2, rr), f(2, a3.med(cpu)), f(2, a2.med(cpu)), f(2, ratio(a3.med(cpu), a2.med(cpu))),
			"≥ 0.5× req/s", yesNo(rr >= 0.5))
	}
	if len(t.rows) == 0 {
		return ""
	}
	return "ramjet's HTTP/3 ÷ its HTTP/2 on the same listener's port (medians; h3load against h2load, same -c -m -n).\n\n" + t.String() + "\n"
}

// h3Handshakes is the time to first byte of fresh connections.
func h3Handshakes(rows []Record) string {
	if len(rows) == 0 {
		return ""
	}
	t := newTable("protocol", "handshake", "TTFB p50 ms|r", "TTFB p99 ms|r", "mean ms|r", "connections|r", "resumed|r", "0-RTT|r")
	var h3early, h2resumed float64
	for _, r := range rows {
		mode := "full (1-RTT)"
		if r.Phase == "resumed" {
			mode = "resumed"
			if r.Proto == "h3" {
				mode = "resumed, 0-RTT GET"
				h3early = r.P50
			} else {
				h2resumed = r.P50
			}
		}
		proto := "h3 (QUIC)"
		if r.Proto == "h2" {
			proto = "h2 + TLS 1.3 (TCP)"
		}
		t.add(proto, mode, f(3, r.P50), f(3, r.P99), f(3, r.Mean), fmt.Sprint(r.Requests), fmt.Sprint(r.Opened), fmt.Sprint(r.Conns))
	}
	s := t.String()
	if h3early > 0 && h2resumed > 0 {
		s += fmt.Sprintf("\nh3 0-RTT ÷ h2+TLS resumed, TTFB p50: %.2f× (target, issue 20: ≤ 1.0×, %s)\n", h3early/h2resumed, yesNo(h3early <= h2resumed))
	}
	return s
}

// h2OverH1 is the cost of each server's HTTP/2 side: h2 ÷ HTTP/1.1 on the
// same listener.
func h2OverH1(ss []series) string {
	t := newTable("page", "server", "req/s h2 ÷ h1|r", "CPU µs/req h2 ÷ h1|r")
	for _, page := range h2Pages {
		if find(ss, page+"/h2/ramjet") == nil || find(ss, page+"/h1/ramjet") == nil {
			continue
		}
		for _, c := range h2Order {
			a2, a1 := find(ss, page+"/h2/"+c), find(ss, page+"/h1/"+c)
			if a2 == nil || a1 == nil {
				continue
			}
			t.add(h2Title[page], h2Label[c], f(2, ratio(a2.med(rps), a1.med(rps))), f(2, ratio(a2.med(cpu), a1.med(cpu))))
		}
	}
	if len(t.rows) == 0 {
		return ""
	}
	return "HTTP/2 ÷ HTTP/1.1 over TLS on the same server (medians): the cost of the h2 side.\n\n" + t.String() + "\n"
}

func h2RSSTable(rows []Record) string {
	if len(rows) == 0 {
		return ""
	}
	t := newTable("server", "RSS before MiB|r", "peak RSS MiB|r", "growth MiB|r", "KiB per connection|r",
		"connections open, max|r", "requests ok|r", "failed|r", "TLS (h2load)")
	var rj, nx float64
	for _, r := range rows {
		g := r.PeakRSS - r.BaseRSS
		kib := "–"
		if r.Open > 0 {
			kib = f(1, g/float64(r.Open))
		}
		label := h2Label[r.Contender] + ", h2"
		if r.Proto == "h3" {
			label = h2Label[r.Contender] + ", h3 (h3load -hold)"
		}
		t.add(label, mib(r.BaseRSS), mib(r.PeakRSS), mib(g), kib, fmt.Sprint(r.Open),
			fmt.Sprint(r.Requests), fmt.Sprint(r.Failed), r.TLS)
		switch {
		case r.Proto == "h3":
		case r.Contender == "ramjet":
			rj = r.PeakRSS
		case r.Contender == "nginx":
			nx = r.PeakRSS
		}
	}
	s := t.String()
	if rj > 0 && nx > 0 {
		s += fmt.Sprintf("\nramjet ÷ nginx peak RSS: %.2f×\n", rj/nx)
	}
	return s
}

func h2AllRuns(rows []Record) string {
	t := newTable("round|r", "page", "protocol", "server", "req/s|r", "mean ms|r", "sd ms|r", "max ms|r", "CPU µs/req|r",
		"peak RSS MiB|r", "requests ok|r", "failed|r", "B/req|r", "origin PHP calls|r", "server core busy %|r",
		"h2load core busy %|r", "other load on server core %|r", "check")
	for _, r := range rows {
		calls := "–"
		if r.Contender == "ramjet" {
			calls = d(phpCallsOf(r))
		}
		t.add(fmt.Sprint(r.Round), r.Workload, r.Proto, h2Label[r.Contender], f(0, r.RPS), f(3, r.Mean), f(3, r.SD),
			f(3, r.Max), f(2, r.CPU), mib(r.RSS), fmt.Sprint(r.Requests), fmt.Sprint(r.Failed), fmt.Sprint(r.Bytes),
			calls, d(r.ServerBusy), d(r.LoadBusy), d(r.Other), r.Check)
	}
	return details("All h2 runs", t.String())
}

func h2Section(d *runData) (string, error) {
	g := d.groups["h2"]
	if g == nil {
		return "", nil
	}
	rows := d.rows["h2"]
	ss := groupBy(rows, h2Key)
	var b strings.Builder
	b.WriteString(h2Table(ss).String() + "\n" + h2RatioTable(ss) + h2OverH1(ss) + h3OverH2(ss))
	return render("h2.tmpl", d, g, map[string]string{
		"tables":  b.String(),
		"rss":     h2RSSTable(d.rows["h2rss"]),
		"hs":      h3Handshakes(d.rows["h2hs"]),
		"allruns": h2AllRuns(rows),
	})
}
