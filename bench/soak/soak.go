package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// node is one ramjet.
type node struct {
	name, addr, admin, tls string
	cfgPath                string
	p                      *process
	pid                    atomic.Int64 // p's, for the RSS reads of another goroutine
	since                  atomic.Int64 // unix nanos when p was started or adopted
}

// run makes p the node's process.
func (n *node) run(p *process) {
	n.p = p
	n.pid.Store(int64(p.pid()))
	n.since.Store(time.Now().UnixNano())
}

type soak struct {
	cfg              config
	dir              string
	bin              string
	origin           *origin
	redisAddr        string
	redis            *process
	nodes            [2]*node
	cert, key        string
	phpDown          atomic.Int64 // unix nanos until which PHP 502s are expected
	nodeDown         atomic.Int64 // unix nanos until which node B may refuse connections (a restart)
	upgrading        atomic.Int64 // unix nanos until which node B's old process may still answer (an upgrade)
	rss              rssTrack
	reloadN          int
	mu               sync.Mutex // guards counts, failures
	counts           map[string]int
	failures         []string // the first 50 of the run
	ended            []string // the end's judgement
	idle             []net.Conn
	httpc, tlsc, adm *http.Client
	// cached maps a URL (node included) to the copy a node answered it
	// from (held): a 5xx for it while the node holds it is a failure,
	// whatever was down.
	cached sync.Map
	gaps   gapLog // the Redis restarts
}

func newSoak(c config) (*soak, error) {
	dir, err := os.MkdirTemp("", "ramjet-soak-")
	if err != nil {
		return nil, err
	}
	// PHP runs as another user (www-data), who must reach www/ in it.
	if err := os.Chmod(dir, 0o711); err != nil {
		return nil, err
	}
	s := &soak{cfg: c, dir: dir, counts: map[string]int{}, origin: &origin{addr: "127.0.0.1:0"}}
	tr := &http.Transport{MaxIdleConnsPerHost: 64, ResponseHeaderTimeout: 30 * time.Second}
	s.httpc = &http.Client{Transport: tr, Timeout: 60 * time.Second}
	s.tlsc = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the soak's own throwaway certificate
	s.adm = &http.Client{Timeout: 10 * time.Second}
	if err := s.setup(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *soak) setup() error {
	s.bin = s.cfg.ramjet
	if s.bin == "" {
		s.bin = filepath.Join(s.dir, "ramjet")
		if out, err := exec.Command("go", "build", "-o", s.bin, "./cmd/ramjet").CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/ramjet (run from the module root): %v\n%s", err, out)
		}
	}
	if err := s.origin.start(); err != nil {
		return err
	}
	var err error
	if s.redisAddr, err = freePort(); err != nil {
		return err
	}
	if err := s.startRedis(); err != nil {
		return err
	}
	s.cert, s.key = filepath.Join(s.dir, "cert.pem"), filepath.Join(s.dir, "key.pem")
	if err := writeCert(s.cert, s.key); err != nil {
		return err
	}
	www := filepath.Join(s.dir, "www")
	if err := os.MkdirAll(www, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(www, "hello.php"), []byte("<?php echo 'hello ', getmypid();\n"), 0o644); err != nil {
		return err
	}
	for i, name := range []string{"a", "b"} {
		n := &node{name: name}
		for _, p := range []*string{&n.addr, &n.admin, &n.tls} {
			if *p, err = freePort(); err != nil {
				return err
			}
		}
		n.cfgPath = filepath.Join(s.dir, "ramjet-"+name+".yaml")
		if err := os.MkdirAll(filepath.Join(s.dir, "disk-"+name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(n.cfgPath, []byte(s.nodeConfig(n, 0)), 0o644); err != nil {
			return err
		}
		p, err := startProcess("ramjet-"+name, s.dir, s.bin, "serve", "--config", n.cfgPath)
		if err != nil {
			return err
		}
		n.run(p)
		s.nodes[i] = n
	}
	for _, n := range s.nodes {
		for _, a := range []string{n.addr, n.admin, n.tls} {
			if err := waitListening(a, 20*time.Second); err != nil {
				return fmt.Errorf("node %s: %w (see %s)", n.name, err, filepath.Join(s.dir, "ramjet-"+n.name+".log"))
			}
		}
	}
	return nil
}

// nodeConfig is a node's file; gen changes a harmless value so that each
// reload is a real one.
func (s *soak) nodeConfig(n *node, gen int) string {
	return fmt.Sprintf(`listen: %q
admin:
  listen: %q
server:
  header_timeout: 2s
  idle_timeout: 120s
  max_conns: 20000
origin:
  servers: ["http://%s"]
  connect_timeout: 1s
purge:
  redis: "redis://%s/0"
  node: %q
tls:
  listen: %q
  cert: %q
  key: %q
defaults:
  default_ttl: %ds
%shosts:
  - names: [php.test]
    docroot:
      root: %q
      php: {binary: %q, workers: 2, min_workers: 2}
`, n.addr, n.admin, s.origin.addr, s.redisAddr, n.name, n.tls, s.cert, s.key, 60+gen%2, s.diskConfig(n), filepath.Join(s.dir, "www"), s.cfg.phpCGI)
}

// diskConfig is a node's cache section with -disk: a RAM tier smaller
// than the pages (the 2 MiB page and the rest do not fit together), so
// the disk tier serves some of them, and purges must reach its files.
func (s *soak) diskConfig(n *node) string {
	if !s.cfg.disk {
		return ""
	}
	return fmt.Sprintf("cache:\n  size: 4MiB\n  max_object_size: 3MiB\n  disk:\n    path: %q\n    size: 64MiB\n", filepath.Join(s.dir, "disk-"+n.name))
}

func (s *soak) startRedis() error {
	_, port, _ := net.SplitHostPort(s.redisAddr)
	var err error
	s.redis, err = startProcess("redis", s.dir, s.cfg.redis, "--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no")
	if err != nil {
		return err
	}
	return waitListening(s.redisAddr, 10*time.Second)
}

func (s *soak) close() {
	for _, c := range s.idle {
		c.Close()
	}
	for _, n := range s.nodes {
		if n != nil && n.p != nil {
			n.p.stop()
		}
	}
	if s.redis != nil {
		s.redis.stop()
	}
	s.origin.stop()
	if s.cfg.keep {
		fmt.Println("soak: work directory kept:", s.dir)
	} else {
		os.RemoveAll(s.dir)
	}
}

func (s *soak) count(what string) {
	s.mu.Lock()
	s.counts[what]++
	s.mu.Unlock()
}

func (s *soak) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	if len(s.failures) < 50 {
		s.failures = append(s.failures, time.Now().Format("15:04:05.000")+" "+msg)
	}
	s.counts["FAIL"]++
	s.mu.Unlock()
}

// failEnd is a failure of the end's judgement: always listed, however
// many requests failed before it.
func (s *soak) failEnd(format string, args ...any) {
	s.mu.Lock()
	s.ended = append(s.ended, fmt.Sprintf(format, args...))
	s.counts["FAIL"]++
	s.mu.Unlock()
}

// within reports whether now is before the unix-nanos mark.
func within(mark *atomic.Int64) bool { return time.Now().UnixNano() < mark.Load() }

// judge classifies one request's outcome: deliberate 5xx while the
// component behind it is down are counted by cause, anything else that
// failed is a failure — a 5xx for a page the node held fresh included
// (cached: an origin restart must not cost a cached page, nor a Redis
// restart within its grace; held.go).
// A failure names its URL and ramjet's reason (see answer.why), and is
// counted by kind, status and reason too.
func (s *soak) judge(kind string, a answer, php bool) {
	code, err := a.code, a.err
	switch {
	case err == nil && code < 500 && code != 0:
		s.count(kind + " ok")
	case err == nil && a.cached:
		s.failAnswer(kind, a, "for a page the node held fresh")
	case err == nil && (code == 502 || code == 503 || code == 504) && php && within(&s.phpDown):
		s.count(kind + " " + strconv.Itoa(code) + " php-cgi killed (" + cmp.Or(a.reason, "origin's own") + ")")
	case err == nil && (code == 502 || code == 503 || code == 504) && !php && within(&s.origin.down):
		s.count(kind + " " + strconv.Itoa(code) + " origin down (" + cmp.Or(a.reason, "origin's own") + ")")
	case err != nil && within(&s.nodeDown):
		s.count(kind + " refused, node B restarting")
	case err != nil:
		s.fail("%s %s: %v", kind, a.url, err)
	default:
		s.failAnswer(kind, a, "")
	}
}

// failAnswer records an answer that failed with a status: its URL, the
// reason, whether the origin or PHP was down at the time, and a count
// by kind, status and reason.
func (s *soak) failAnswer(kind string, a answer, note string) {
	down := ""
	if within(&s.origin.down) {
		down = ", origin down"
	}
	if within(&s.phpDown) {
		down += ", a php-cgi killed"
	}
	s.fail("%s %s: status %d (%s%s) %s", kind, a.url, a.code, a.why(), down, note)
	s.count(fmt.Sprintf("failed %s %d %s", kind, a.code, cmp.Or(a.reason, "(origin's own)")))
}

// get fetches u; the answer's cached says the node held a fresh copy of
// it when the request was sent (as far as its earlier answers tell).
func (s *soak) get(c *http.Client, u, host string) answer {
	a, sent := answer{url: u}, time.Now()
	if h, ok := s.cached.Load(u); ok {
		a.cached = s.gaps.holds(h.(held), sent)
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		a.err = err
		return a
	}
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	if err != nil {
		a.err = err
		return a
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	s.noteCached(u, sent, resp)
	a.code, a.body, a.err = resp.StatusCode, string(b), err
	a.reason, a.cacheStatus = resp.Header.Get(errorHeader), resp.Header.Get("Cache-Status")
	return a
}

// noteCached remembers the copy of u the node holds (held.go), from an
// answer it stored or served from its cache.
func (s *soak) noteCached(u string, sent time.Time, resp *http.Response) {
	cs := resp.Header.Get("Cache-Status")
	if resp.StatusCode != 200 || !(strings.Contains(cs, "stored") || strings.Contains(cs, "; hit")) ||
		strings.Contains(cs, "fwd=stale") {
		return
	}
	_, v, ok := strings.Cut(resp.Header.Get("Cache-Control"), "max-age=")
	if !ok {
		return
	}
	maxAge, err := strconv.Atoi(strings.TrimRight(v, ", ;abcdefghijklmnopqrstuvwxyz-="))
	if err != nil {
		return
	}
	age, _ := strconv.Atoi(resp.Header.Get("Age"))
	s.cached.Store(u, heldFrom(sent, maxAge, age))
}

// run drives the traffic and the disruptions, then checks the end.
func (s *soak) run() bool {
	fmt.Printf("soak: %v, disruptions every %v, %d idle connections; work dir %s\n", s.cfg.duration, s.cfg.every, s.cfg.idle, s.dir)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.duration)
	defer cancel()
	var wg sync.WaitGroup
	loop := func(f func(*rand.Rand)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(rand.Uint64(), 1))
			for ctx.Err() == nil {
				f(r)
			}
		}()
	}
	for range 6 {
		loop(func(r *rand.Rand) { s.hit(r) })
	}
	loop(func(r *rand.Rand) { s.miss(r) })
	loop(func(r *rand.Rand) { s.esi(r) })
	loop(func(r *rand.Rand) { s.php(r) })
	loop(func(r *rand.Rand) { s.tlsHit(r) })
	if s.cfg.disk {
		loop(func(r *rand.Rand) { s.wide(r) })
	}
	loop(func(r *rand.Rand) { s.purge(ctx, r) })
	loop(func(r *rand.Rand) { s.slowReader(ctx) })
	loop(func(r *rand.Rand) { s.slowloris(ctx) })
	loop(func(r *rand.Rand) { s.lateTalker(r) })
	wg.Add(1)
	go func() { defer wg.Done(); s.rss.follow(ctx, s.nodes) }()

	warm := min(s.cfg.duration/5, 60*time.Second)
	sleepCtx(ctx, warm)
	s.openIdle()
	// The baseline is taken once every kind of disruption has happened,
	// and RSS is judged from the round after: steady state against steady
	// state (the caches filled to their bounds during the warm-up; a
	// fan-out gap's warm-up holds the old and the new copy of each page
	// for a moment, a flush held neither).
	s.disruptOnce(ctx)
	s.rss.roundEnded(time.Now())
	base := s.sample("after warm-up and one round of disruptions")
	wg.Add(1)
	go func() { defer wg.Done(); s.disrupt(ctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.keepIdle(ctx) }()
	<-ctx.Done()
	wg.Wait()
	end := s.sample("end")
	return s.report(base, end)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (s *soak) pick(r *rand.Rand) *node { return s.nodes[r.IntN(2)] }

func (s *soak) hit(r *rand.Rand) {
	n := s.pick(r)
	s.judge("hit", s.get(s.httpc, "http://"+n.addr+"/hit/"+strconv.Itoa(r.IntN(200)), ""), false)
}

// wide asks for more pages than RAM holds: the disk tier answers the
// rest (and the purged news pages are sometimes read back from it).
func (s *soak) wide(r *rand.Rand) {
	s.judge("wide hit", s.get(s.httpc, "http://"+s.pick(r).addr+"/hit/"+strconv.Itoa(200+r.IntN(widePages)), ""), false)
}

// widePages is how many pages wide asks for: about 4.5 MB with their
// entries, over RAM's 4 MiB that the 2 MiB page shares.
const widePages = 3000

func (s *soak) tlsHit(r *rand.Rand) {
	s.judge("tls hit", s.get(s.tlsc, "https://"+s.nodes[0].tls+"/hit/"+strconv.Itoa(r.IntN(200)), ""), false)
}

func (s *soak) miss(r *rand.Rand) {
	s.judge("miss", s.get(s.httpc, "http://"+s.pick(r).addr+"/miss?r="+strconv.Itoa(r.Int()), ""), false)
}

func (s *soak) esi(r *rand.Rand) {
	a := s.get(s.httpc, "http://"+s.pick(r).addr+"/esi/"+strconv.Itoa(r.IntN(20)), "")
	if a.err == nil && a.code == 200 && strings.Contains(a.body, "<esi:") {
		s.fail("esi page with markup: %.100q", a.body)
		return
	}
	s.judge("esi", a, false)
}

func (s *soak) php(r *rand.Rand) {
	a := s.get(s.httpc, "http://"+s.pick(r).addr+"/hello.php", "php.test")
	if a.err == nil && a.code == http.StatusOK && !strings.HasPrefix(a.body, "hello ") {
		s.fail("php %s: 200 without the script's output: %.80q", a.url, a.body)
		return
	}
	s.judge("php", a, true)
	time.Sleep(5 * time.Millisecond) // PHP's share of the load stays small
}

// purge bumps a page's version at the origin, purges its tag on one node
// and checks that neither node serves the old version once the purge had
// time to arrive: at once on the node that took it, within 10 s on the
// other (a Redis restart delays the fan-out, never loses it).
func (s *soak) purge(ctx context.Context, r *rand.Rand) {
	i := r.IntN(purgePages)
	page := "/news/" + strconv.Itoa(i)
	for _, n := range s.nodes { // cached on both first
		s.get(s.httpc, "http://"+n.addr+page, "")
	}
	v := s.origin.versions[i].Add(1)
	via := s.pick(r)
	resp, err := s.adm.PostForm("http://"+via.admin+"/purge", url.Values{"tag": {"news-" + strconv.Itoa(i)}})
	if err != nil && within(&s.nodeDown) {
		s.count("purges refused, node B restarting")
		return
	}
	if err != nil {
		s.fail("purge via %s: %v", via.name, err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		s.fail("purge via %s: status %d", via.name, resp.StatusCode)
		return
	}
	s.count("purges")
	want := "v=" + strconv.FormatInt(v, 10) + ";"
	for _, n := range s.nodes {
		deadline := time.Now().Add(10 * time.Second)
		if n == via {
			deadline = time.Now() // applied before the API answered
		}
		for {
			a := s.get(s.httpc, "http://"+n.addr+page, "")
			if a.err == nil && a.code == 200 && strings.Contains(a.body, want) {
				break
			}
			if a.err == nil && a.code == 200 && time.Now().After(deadline) {
				s.fail("lost purge: node %s serves %q after purging news-%d via %s (want %s; Cache-Status: %s%s)",
					n.name, a.body, i, via.name, want, a.cacheStatus, s.nodeBState())
				s.count("lost purges")
				break
			}
			if ctx.Err() != nil || time.Now().After(deadline.Add(20*time.Second)) {
				break // the origin stayed down: nothing to judge
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	time.Sleep(200 * time.Millisecond)
}

// nodeBState says whether node B was being upgraded or restarted, and
// how long its process has run, for a lost purge's message: an upgrade
// runs two processes of the node for a moment (the old one answers the
// connections it kept), and a restarted node that could not replay the
// stream within 5 s serves what it loaded stale (fwd=stale) while it
// refreshes it.
func (s *soak) nodeBState() string {
	state := fmt.Sprintf(", node B's process up %v", time.Since(time.Unix(0, s.nodes[1].since.Load())).Round(time.Millisecond))
	switch {
	case within(&s.upgrading):
		state += ", node B upgrading"
	case within(&s.nodeDown):
		state += ", node B restarting"
	}
	return state
}

// slowReader reads a 2 MiB page at about 256 KiB/s.
func (s *soak) slowReader(ctx context.Context) {
	c, err := net.Dial("tcp", s.nodes[1].addr)
	if err != nil && within(&s.nodeDown) {
		time.Sleep(100 * time.Millisecond)
		return
	}
	if err != nil {
		s.fail("slow reader: %v", err)
		return
	}
	defer c.Close()
	io.WriteString(c, "GET /big HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n")
	buf := make([]byte, 16<<10)
	var n int64
	for ctx.Err() == nil {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		k, err := c.Read(buf)
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil && within(&s.nodeDown) {
			s.count("slow reads cut by a restart")
			return
		}
		if err != nil {
			s.fail("slow reader after %d bytes: %v", n, err)
			return
		}
		time.Sleep(60 * time.Millisecond)
	}
	s.count("slow reads")
}

// slowloris trickles a header that never ends; the node must cut it off
// at server.header_timeout (2 s).
func (s *soak) slowloris(ctx context.Context) {
	c, err := net.Dial("tcp", s.nodes[0].addr)
	if err != nil {
		s.fail("slowloris: %v", err)
		return
	}
	defer c.Close()
	start := time.Now()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: soak\r\n")
	for ctx.Err() == nil && time.Since(start) < 30*time.Second {
		if _, err := io.WriteString(c, "X-a: b\r\n"); err != nil {
			break
		}
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := c.Read(make([]byte, 512)); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			break
		}
	}
	if ctx.Err() != nil {
		return
	}
	if d := time.Since(start); d > 10*time.Second {
		s.fail("slowloris held for %v", d)
		return
	}
	s.count("slowloris cut off")
}

// lateTalker connects to node B and sends its request up to 0.6 s
// later, as a browser's preconnection does: by then the node has often
// parked the connection for want of bytes, and an upgrade or a restart
// may have begun. A connection the node accepted is its own to answer
// (proxy/conns/drain.go), so this fails like any request; only while a
// restart has node B down may it be refused (a connection queued in the
// kernel as the listener closes, with no process to hand it to).
func (s *soak) lateTalker(r *rand.Rand) {
	n := s.nodes[1]
	a := answer{url: "http://" + n.addr + "/hit/2 (late talker)"}
	c, err := net.DialTimeout("tcp", n.addr, 10*time.Second)
	if err != nil {
		a.err = err
		s.judge("late talker", a, false)
		time.Sleep(50 * time.Millisecond)
		return
	}
	defer c.Close()
	time.Sleep(time.Duration(r.IntN(600)) * time.Millisecond)
	a = closingRequest(c, a)
	s.judge("late talker", a, false)
}

// openIdle opens the idle connections on node A, one request each.
func (s *soak) openIdle() {
	for range s.cfg.idle {
		c, err := net.Dial("tcp", s.nodes[0].addr)
		if err != nil {
			s.fail("idle connection: %v", err)
			return
		}
		s.idle = append(s.idle, c)
		s.judgeIdle("at open", idleRequest(c))
	}
	s.count("idle connections")
}

// keepIdle sends one request on every idle connection each minute, under
// the 120 s idle timeout: each must still be open and answer.
func (s *soak) keepIdle(ctx context.Context) {
	for {
		sleepCtx(ctx, time.Minute)
		if ctx.Err() != nil {
			return
		}
		for _, c := range s.idle {
			s.judgeIdle("after a minute", idleRequest(c))
		}
		s.count("idle rounds")
	}
}

// disrupt runs a round of disruptions every cfg.every, spread out.
func (s *soak) disrupt(ctx context.Context) {
	for ctx.Err() == nil {
		s.disruptOnce(ctx)
		if ctx.Err() == nil { // a whole round
			s.rss.roundEnded(time.Now())
		}
	}
}

// disruptOnce runs one round of disruptions over cfg.every.
func (s *soak) disruptOnce(ctx context.Context) {
	steps := []func(){s.reload, s.restartOrigin, s.restartRedis, s.killPHP, s.rotateCert, s.restartRedisDuringOrigin}
	if s.cfg.disk {
		steps = append(steps, s.upgrade, s.restartNode)
	}
	for _, f := range steps {
		if ctx.Err() != nil {
			return
		}
		f()
		sleepCtx(ctx, s.cfg.every/time.Duration(len(steps)))
	}
}

func (s *soak) reload() {
	s.reloadN++
	for _, n := range s.nodes {
		if err := writeAtomic(n.cfgPath, []byte(s.nodeConfig(n, s.reloadN))); err != nil {
			s.fail("reload: %v", err)
			return
		}
		_ = syscall.Kill(n.p.pid(), syscall.SIGHUP)
	}
	s.count("reloads")
}

// upgrade sends node B SIGUSR2, as the package's upgrade does: the binary
// on disk takes over its listeners and its disk tier while the old one
// drains. Not a request may fail (no window is opened for errors), and
// the purges keep reaching it.
func (s *soak) upgrade() {
	n := s.nodes[1]
	old := n.p
	s.upgrading.Store(time.Now().Add(time.Hour).UnixNano())
	defer func() { s.upgrading.Store(time.Now().Add(time.Second).UnixNano()) }()
	if err := syscall.Kill(old.pid(), syscall.SIGUSR2); err != nil {
		s.fail("upgrade: %v", err)
		return
	}
	end := time.Now().Add(60 * time.Second)
	for time.Now().Before(end) {
		select {
		case <-old.done:
			for _, pid := range withArgs("serve", "--config", n.cfgPath) {
				n.run(adopt(n.p.name, pid))
				s.count("upgrades")
				return
			}
			s.fail("upgrade: node B's old process exited and no new one runs")
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.fail("upgrade: node B's old process still runs after 60 s")
}

// restartNode stops node B (SIGTERM: it drains, applies its purges and
// marks its disk tier clean) and starts it again on the same files: its
// pages are hits again, and the purges sent through node A while it was
// down reach it from the Redis stream.
func (s *soak) restartNode() {
	n := s.nodes[1]
	s.nodeDown.Store(time.Now().Add(time.Hour).UnixNano())
	n.p.stop()
	p, err := startProcess("ramjet-"+n.name, s.dir, s.bin, "serve", "--config", n.cfgPath)
	if err != nil {
		s.fail("node restart: %v", err)
		return
	}
	n.run(p)
	for _, a := range []string{n.addr, n.admin, n.tls} {
		if err := waitListening(a, 20*time.Second); err != nil {
			s.fail("node restart: %v", err)
		}
	}
	s.nodeDown.Store(time.Now().Add(time.Second).UnixNano())
	s.count("node restarts")
}

func (s *soak) restartOrigin() {
	s.origin.down.Store(time.Now().Add(time.Hour).UnixNano())
	s.origin.stop()
	time.Sleep(time.Second)
	if err := s.origin.start(); err != nil {
		s.fail("origin restart: %v", err)
	}
	// In-flight requests that met the dead origin finish within a second.
	s.origin.down.Store(time.Now().Add(2 * time.Second).UnixNano())
	s.count("origin restarts")
}

func (s *soak) restartRedis() {
	stopped := time.Now()
	s.redis.stop()
	time.Sleep(time.Second)
	if err := s.startRedis(); err != nil {
		s.fail("redis restart: %v", err)
	}
	s.gaps.add(stopped, time.Now())
	s.count("redis restarts")
}

// restartRedisDuringOrigin restarts Redis (empty: a gap on every node)
// while the origin is down: cached pages must keep answering.
func (s *soak) restartRedisDuringOrigin() {
	s.origin.down.Store(time.Now().Add(time.Hour).UnixNano())
	s.origin.stop()
	s.restartRedis()
	if err := s.origin.start(); err != nil {
		s.fail("origin restart: %v", err)
	}
	s.origin.down.Store(time.Now().Add(2 * time.Second).UnixNano())
	s.count("redis restarts during origin restarts")
}

func (s *soak) killPHP() {
	n := s.nodes[rand.IntN(2)]
	pids := children(n.p.pid(), filepath.Base(s.cfg.phpCGI))
	if len(pids) == 0 {
		s.count("php kills (no worker found)")
		return
	}
	s.phpDown.Store(time.Now().Add(3 * time.Second).UnixNano())
	_ = syscall.Kill(pids[rand.IntN(len(pids))], syscall.SIGKILL)
	s.count("php-cgi kills")
}

func (s *soak) rotateCert() {
	if err := writeCert(s.cert, s.key); err != nil {
		s.fail("certificate rotation: %v", err)
		return
	}
	s.count("certificate rotations")
}

func medianOf(v []int64) int64 {
	v = append([]int64(nil), v...)
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// sample is what the end is compared with: descriptors and goroutines
// (RSS is judged by round, rss.go; this read is only printed). fds
// leaves out the files the disk tier keeps open (ramjet_disk_open_files):
// as nginx's open_file_cache, it keeps each file it sent open, up to its
// bound, so a node that sent more of its files by the end holds more
// descriptors (node B, a fresh process at the baseline, 1,436 → 2,343 in
// a soak whose ramjet leaked none), and that is no leak.
type sample struct {
	rss, fds, kept, goroutines [2]int64
	fdKinds                    [2]string
}

// sample waits 3 s (the idle connections just opened, or the load just
// stopped, settle) and reads each node's RSS, descriptors and goroutines.
func (s *soak) sample(when string) sample {
	time.Sleep(3 * time.Second)
	var out sample
	for i, n := range s.nodes {
		out.rss[i] = rss(n.p.pid())
		out.kept[i] = int64(max(s.metric(n, "ramjet_disk_open_files"), 0))
		out.fds[i] = int64(fds(n.p.pid())) - out.kept[i]
		out.fdKinds[i] = fdKinds(n.p.pid())
		out.goroutines[i] = int64(s.metric(n, "go_goroutines"))
	}
	fmt.Printf("soak: %s: RSS %d / %d kB, fds %d / %d besides the disk tier's kept-open files (%d / %d), goroutines %d / %d\n", when,
		out.rss[0], out.rss[1], out.fds[0], out.fds[1], out.kept[0], out.kept[1], out.goroutines[0], out.goroutines[1])
	return out
}

func (s *soak) metric(n *node, name string) float64 {
	resp, err := s.adm.Get("http://" + n.admin + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// metricSum adds up every series of n's metrics whose line starts with
// prefix (a name and its opening brace: all its labels).
func (s *soak) metricSum(n *node, prefix string) float64 {
	resp, err := s.adm.Get("http://" + n.admin + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), prefix) {
			continue
		}
		if i := strings.LastIndexByte(sc.Text(), ' '); i > 0 {
			f, _ := strconv.ParseFloat(sc.Text()[i+1:], 64)
			sum += f
		}
	}
	return sum
}

// judgeRSS fails a node whose RSS peak per round grew past the bound
// (rss.go says why by round).
func (s *soak) judgeRSS() {
	for i, n := range s.nodes {
		peaks := s.rss.peaks(i)
		fmt.Printf("soak: node %s: RSS peak of each round after the first %v kB\n", n.name, peaks)
		first, last, k, ok := rssGrowth(peaks)
		if !ok {
			fmt.Printf("soak: node %s: RSS not judged: fewer than two whole rounds after the first\n", n.name)
			continue
		}
		if rssGrew(first, last) {
			s.failEnd("node %s: RSS grew %d → %d kB (median peak of the first and the last %d rounds, > 10 %%)", n.name, first, last, k)
		}
	}
}

func (s *soak) report(base, end sample) bool {
	s.judgeRSS()
	for i, n := range s.nodes {
		// The load's own connections (keep-alive clients, a slow reader
		// cut short) may still be closing: a few are slack, a leak is not.
		if end.fds[i] > base.fds[i]+16 {
			s.failEnd("node %s: descriptors %d → %d (%s → %s, the disk tier's kept-open files %d → %d)", n.name, base.fds[i], end.fds[i],
				base.fdKinds[i], end.fdKinds[i], base.kept[i], end.kept[i])
		}
		if end.goroutines[i] > base.goroutines[i]+64 {
			s.failEnd("node %s: goroutines %d → %d", n.name, base.goroutines[i], end.goroutines[i])
		}
		if v := s.metric(n, `ramjet_reloads_total{result="error"}`); v > 0 {
			s.failEnd("node %s: %v failed reloads", n.name, v)
		}
		s.mu.Lock()
		s.counts["node "+n.name+" purge gaps"] = int(s.metricSum(n, "ramjet_purge_fanout_gaps_total{"))
		s.counts["node "+n.name+" cache flushes"] = int(max(s.metric(n, "ramjet_purge_fanout_flushes_total"), 0))
		if s.cfg.disk { // the last process's: a restart or an upgrade starts them again
			s.counts["node "+n.name+" disk hits"] = int(max(s.metric(n, "ramjet_disk_hits_total"), 0))
			s.counts["node "+n.name+" disk files"] = int(max(s.metric(n, "ramjet_disk_objects"), 0))
			s.counts["node "+n.name+" disk hits from the write queue"] = int(max(s.metric(n, "ramjet_disk_queued_hits_total"), 0))
			s.counts["node "+n.name+" disk copies dropped"] = int(max(s.metric(n, "ramjet_disk_dropped_total"), 0))
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.counts))
	for k := range s.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %-40s %d\n", k, s.counts[k])
	}
	for _, f := range s.failures {
		fmt.Println("  FAIL", f)
	}
	if n := s.counts["FAIL"] - len(s.failures) - len(s.ended); n > 0 {
		fmt.Printf("  FAIL ... and %d more failed requests (counted above by kind)\n", n)
	}
	for _, f := range s.ended {
		fmt.Println("  FAIL at the end:", f)
	}
	if len(s.failures)+len(s.ended) > 0 {
		fmt.Println("soak: FAIL")
		return false
	}
	fmt.Println("soak: PASS")
	return true
}
