package main

import (
	"fmt"
	"strings"
)

// The connection groups: tail latency at many connections, and RSS with
// many idle keep-alive connections, on the cache contenders.

func tailTable(ss []series) *table {
	t := newTable("server", "req/s (median)|r", "req/s (min–max)|r", "p50 ms|r", "p90 ms|r", "p99 ms|r", "p99.9 ms|r",
		"p99.9 ms (worst)|r", "max ms (worst)|r", "server CPU µs/req|r", "peak RSS MiB|r", "errors|r",
		"other load on server core, max %|r", "wrk core busy, max %|r", "hit check")
	for _, s := range ss {
		t.add(cacheLabel[s.key], f(0, s.med(rps)), rangeOf(s, 0, rps), f(3, s.med(p50)), f(3, s.med(p90)),
			f(3, s.med(p99)), f(3, s.med(p999)), f(3, s.max(p999)), f(3, s.max(maxMS)), f(2, s.med(cpu)),
			mib(s.max(rssKB)), d(s.sum(errs)), d(s.max(other)), d(s.max(loadBusy)), s.hitCell())
	}
	return t
}

func tailRatioTable(ss []series, conns string) string {
	rj := find(ss, "ramjet")
	if rj == nil {
		return ""
	}
	t := newTable("ramjet vs", "req/s ×|r", "p99 ×|r", "p99.9 ×|r", "CPU µs/req ×|r", "where ramjet loses")
	for _, s := range ss {
		if s.key == "ramjet" {
			continue
		}
		rr := ratio(rj.med(rps), s.med(rps))
		pr := ratio(rj.med(p99), s.med(p99))
		tr := ratio(rj.med(p999), s.med(p999))
		cr := ratio(rj.med(cpu), s.med(cpu))
		t.add(cacheLabel[s.key], f(2, rr), f(2, pr), f(2, tr), f(2, cr),
			losses(cmp{"req/s", rr, true}, cmp{"p99", pr, false}, cmp{"p99.9", tr, false}, cmp{"CPU/req", cr, false}))
	}
	return "ramjet vs each contender at " + conns + " connections (medians; req/s above 1 = ramjet faster, latency below 1 = " +
		"ramjet better; the last column names where ramjet is worse by more than 2 %):\n\n" + t.String() + "\n"
}

// idleServer is one server's pass of the idle group.
type idleServer struct {
	key                   string
	steps                 map[int]float64 // connections -> RSS kB
	holdOpen              int
	peak, last            float64
	failed, notOK, closed int
	check                 string
}

func idleServers(rows []Record) ([]idleServer, []int) {
	var out []idleServer
	var steps []int
	seenStep := map[int]bool{}
	for _, s := range groupBy(rows, func(r Record) string { return r.Contender }) {
		v := idleServer{key: s.key, steps: map[int]float64{}}
		for _, r := range s.rows {
			switch r.Phase {
			case "step":
				v.steps[r.Conns] = r.RSS
				if !seenStep[r.Conns] {
					seenStep[r.Conns] = true
					steps = append(steps, r.Conns)
				}
			case "hold":
				v.holdOpen, v.peak, v.last = r.Open, r.PeakRSS, r.LastRSS
			case "done":
				v.failed, v.notOK, v.closed = r.Failed, r.NotOK, r.Closed
			}
			v.check = r.Check
		}
		out = append(out, v)
	}
	return out, steps
}

func (v idleServer) growth() float64 { return v.last - v.steps[0] }

func idleTable(vs []idleServer, steps []int) *table {
	cols := []string{"server"}
	for _, n := range steps {
		cols = append(cols, fmt.Sprintf("RSS MiB at %d conns|r", n))
	}
	cols = append(cols, "peak RSS MiB while held|r", "growth MiB|r", "KiB per connection|r", "open at the end|r",
		"failed|r", "not 200|r", "closed by the server|r", "hit check")
	t := newTable(cols...)
	for _, v := range vs {
		cells := []string{cacheLabel[v.key]}
		for _, n := range steps {
			if kb, ok := v.steps[n]; ok {
				cells = append(cells, mib(kb))
			} else {
				cells = append(cells, "–")
			}
		}
		kib := "–"
		if v.holdOpen > 0 {
			kib = f(1, v.growth()/float64(v.holdOpen))
		}
		chk := "hit"
		if v.key == "static" {
			chk = "n/a (file)"
		}
		switch v.check {
		case "hit", "n/a":
		case "": // the TLS + HTTP/2 row: no hit check of its own
			chk = "–"
		default:
			chk = bold(v.check)
		}
		cells = append(cells, mib(v.peak), mib(v.growth()), kib, fmt.Sprint(v.holdOpen), fmt.Sprint(v.failed),
			fmt.Sprint(v.notOK), fmt.Sprint(v.closed), chk)
		t.add(cells...)
	}
	return t
}

func idleRatioTable(vs []idleServer) string {
	var rj *idleServer
	for i := range vs {
		if vs[i].key == "ramjet" {
			rj = &vs[i]
		}
	}
	if rj == nil {
		return ""
	}
	t := newTable("ramjet vs", "RSS held ×|r", "peak RSS ×|r", "growth ×|r", "where ramjet loses")
	for _, v := range vs {
		if v.key == "ramjet" {
			continue
		}
		a := ratio(rj.last, v.last)
		p := ratio(rj.peak, v.peak)
		g := ratio(rj.growth(), v.growth())
		t.add(cacheLabel[v.key], f(2, a), f(2, p), f(2, g),
			losses(cmp{"RSS held", a, false}, cmp{"peak RSS", p, false}, cmp{"growth", g, false}))
	}
	return "ramjet ÷ each server (below 1 = ramjet uses less; the last column names where it uses more by more than 2 %):\n\n" +
		t.String() + "\n"
}

func tailSection(d *runData) (string, error) {
	g := d.groups["tail"]
	if g == nil {
		return "", nil
	}
	ss := groupBy(d.rows["tail"], func(r Record) string { return r.Contender })
	return render("tail.tmpl", d, g, map[string]string{
		"table": tailTable(ss).String(),
		"ratio": tailRatioTable(ss, g["conns"]),
	})
}

func idleSection(d *runData) (string, error) {
	g := d.groups["idle"]
	if g == nil {
		return "", nil
	}
	vs, steps := idleServers(d.rows["idle"])
	var b strings.Builder
	if g["skip"] == "" {
		b.WriteString(idleTable(vs, steps).String() + "\n" + idleRatioTable(vs))
	}
	tls := ""
	if tg := d.groups["idletls"]; tg != nil && tg["skip"] == "" && len(d.rows["idletls"]) > 0 {
		vs, steps := idleServers(d.rows["idletls"])
		tls = idleTable(vs, steps).String() + "\n" + idleRatioTable(vs)
	}
	return render("idle.tmpl", d, g, map[string]string{"tables": b.String(), "tls": tls})
}
