// Command soak runs two ramjet nodes sharing a Redis purge stream in
// front of one origin (its own, in this process) and a docroot site on
// php-cgi, sends them mixed traffic for -duration (10 minutes by
// default), and every -every (20 s) reloads the config, restarts the
// origin, restarts Redis, kills a php-cgi worker with SIGKILL and rotates
// the TLS certificate. Everything listens on 127.0.0.1 and every loop is
// bounded by the duration.
//
// Traffic: cache hits on both nodes (HTTP/1.1, and TLS on node A),
// uncacheable misses, ESI pages with a fragment, PHP in docroot mode,
// purges by tag through the admin API with a check that no node serves a
// purged page, a few slow readers and slowloris clients, late talkers (a
// connection to node B whose request comes up to 0.6 s after its
// connect: answered through an upgrade or a stop's drain), and -idle
// (2,000) idle keep-alive connections held on node A. With -disk (the default)
// both nodes have a disk tier under a RAM tier smaller than the pages,
// and each round also upgrades node B in place (SIGUSR2: no request may
// fail) and restarts it (SIGTERM, start: refused connections are counted
// while it is down; a purge sent through node A meanwhile must reach it).
//
// A failed answer names its URL, ramjet's Ramjet-Error reason and its
// Cache-Status, and is counted by kind, status and reason.
//
// It fails (exit 1) on: a failed request that is not a 502/503/504 while
// the component behind it was down or just killed (each counted by
// cause), a lost purge (a node serving a page's old version once its purge
// had time to reach it), a node's RSS growing past 10 % under load (its
// peak in each round of disruptions, read every second: the median of the
// last three rounds' against that of the first three after the warm-up
// round; rss.go says why), or goroutines or file descriptors left over at
// the end: counted with the load stopped and the idle connections still
// open, they may not exceed (with a little slack) those counted under load
// after warm-up.
//
//	go run ./bench/soak --duration 60s
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

type config struct {
	duration, every time.Duration
	idle            int
	ramjet          string // binary; built from the module when empty
	phpCGI          string
	redis           string
	keep            bool
	disk            bool // the disk tier on, with upgrades and restarts of node B
}

func main() {
	var c config
	fs := flag.NewFlagSet("soak", flag.ExitOnError)
	fs.DurationVar(&c.duration, "duration", 10*time.Minute, "how long the traffic runs (at most 1h)")
	fs.DurationVar(&c.every, "every", 20*time.Second, "time between rounds of disruptions")
	fs.IntVar(&c.idle, "idle", 2000, "idle keep-alive connections held on node A")
	fs.StringVar(&c.ramjet, "ramjet", "", "ramjet binary (default: go build ./cmd/ramjet)")
	fs.StringVar(&c.phpCGI, "php-cgi", "/usr/bin/php-cgi", "php-cgi binary")
	fs.StringVar(&c.redis, "redis-server", "/usr/bin/redis-server", "redis-server binary")
	fs.BoolVar(&c.disk, "disk", true, "the disk tier on both nodes, and node B upgraded (SIGUSR2) and restarted every round")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (configs, logs)")
	_ = fs.Parse(os.Args[1:])
	if c.duration <= 0 || c.duration > time.Hour || c.every < time.Second || c.idle < 0 || c.idle > 20000 {
		fmt.Fprintln(os.Stderr, "soak: -duration in (0, 1h], -every at least 1s, -idle in [0, 20000]")
		os.Exit(2)
	}
	s, err := newSoak(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	ok := s.run()
	s.close()
	if !ok {
		os.Exit(1)
	}
}
