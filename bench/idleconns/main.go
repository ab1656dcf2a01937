// Command idleconns opens idle HTTP/1.1 keep-alive connections (or, with
// -proto h2, TLS + HTTP/2 ones) to one loopback server in steps, each
// connection after one request, and prints
// the server's memory (VmRSS summed over the processes given with -pids) at
// every step and while the last step is held. bench/run's idle group uses
// it for the "RSS at 10,000 idle keep-alive connections" table.
//
// Output, one tab-separated line per event on stdout:
//
//	step	CONNS	OPEN	RSS_KB     after CONNS connections were opened (OPEN still open)
//	hold	OPEN	PEAK_KB	LAST_KB    after -hold with every connection open
//	done	OPENED	FAILED	NOT200	CLOSED_BY_SERVER
//
// It only connects to loopback addresses and stops by itself after -timeout.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type config struct {
	addr     string
	path     string
	n        int
	steps    []int
	hold     time.Duration
	settle   time.Duration
	parallel int
	timeout  time.Duration
	pids     []int
	h2       bool // TLS + HTTP/2 instead of plain HTTP/1.1
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "idleconns:", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "idleconns:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var c config
	var steps, pids string
	fs := flag.NewFlagSet("idleconns", flag.ContinueOnError)
	fs.StringVar(&c.addr, "addr", "", "server address, a loopback HOST:PORT")
	fs.StringVar(&c.path, "path", "/", "path of the one request each connection makes")
	fs.IntVar(&c.n, "n", 10000, "connections to open")
	fs.StringVar(&steps, "steps", "", "comma-separated connection counts below -n at which to report the RSS")
	fs.DurationVar(&c.hold, "hold", 10*time.Second, "how long all -n connections stay open")
	fs.DurationVar(&c.settle, "settle", time.Second, "wait after each step before reading the RSS")
	fs.IntVar(&c.parallel, "parallel", 64, "connections being opened at once")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "the whole run at most")
	fs.StringVar(&pids, "pids", "", "space-separated pids of the server's processes")
	proto := fs.String("proto", "h1", "h1: plain HTTP/1.1; h2: TLS (certificate not verified: loopback) and HTTP/2 by ALPN")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch *proto {
	case "h1":
	case "h2":
		c.h2 = true
	default:
		return c, fmt.Errorf("-proto %q: h1 or h2", *proto)
	}
	host, _, err := net.SplitHostPort(c.addr)
	if err != nil {
		return c, fmt.Errorf("-addr: %w", err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return c, fmt.Errorf("-addr %s: only loopback addresses", c.addr)
	}
	if c.n < 1 || c.parallel < 1 {
		return c, errors.New("-n and -parallel must be at least 1")
	}
	for _, f := range strings.FieldsFunc(steps, func(r rune) bool { return r == ',' }) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 || v >= c.n || (len(c.steps) > 0 && v <= c.steps[len(c.steps)-1]) {
			return c, fmt.Errorf("-steps: %q must be increasing counts below -n", steps)
		}
		c.steps = append(c.steps, v)
	}
	c.steps = append(c.steps, c.n)
	for _, f := range strings.Fields(pids) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return c, fmt.Errorf("-pids: %w", err)
		}
		c.pids = append(c.pids, v)
	}
	if len(c.pids) == 0 {
		return c, errors.New("-pids: no server process given")
	}
	return c, nil
}

// opener holds the connections; each has a goroutine blocked in Read that
// counts the server closing it.
type opener struct {
	cfg     config
	dialer  net.Dialer
	request []byte

	mu    sync.Mutex // guards conns
	conns []net.Conn

	failed, not200, closed atomic.Int64
	closing                atomic.Bool
	watchers               sync.WaitGroup
}

func run(cfg config) error {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	o := &opener{cfg: cfg, request: []byte("GET " + cfg.path + " HTTP/1.1\r\nHost: " + cfg.addr +
		"\r\nUser-Agent: ramjet-bench-idleconns\r\n\r\n")}
	srcs := sourceAddrs(cfg.n)
	defer o.closeAll()

	fmt.Printf("step\t0\t0\t%d\n", rss(cfg.pids))
	for _, target := range cfg.steps {
		o.openUpTo(ctx, target, srcs)
		if !sleep(ctx, cfg.settle) {
			break
		}
		fmt.Printf("step\t%d\t%d\t%d\n", target, o.open(), rss(cfg.pids))
	}
	var peak, last int64
	for end := time.Now().Add(cfg.hold); ctx.Err() == nil && time.Now().Before(end); {
		last = rss(cfg.pids)
		peak = max(peak, last)
		sleep(ctx, 250*time.Millisecond)
	}
	fmt.Printf("hold\t%d\t%d\t%d\n", o.open(), peak, last)
	o.closeAll()
	fmt.Printf("done\t%d\t%d\t%d\t%d\n", o.opened(), o.failed.Load(), o.not200.Load(), o.closed.Load())
	if ctx.Err() != nil {
		return fmt.Errorf("stopped after -timeout %v with %d connections opened", o.cfg.timeout, o.opened())
	}
	return nil
}

// sourceAddrs: one loopback source address while the ephemeral port range
// holds twice the connections, else as many 127.0.0.x as it takes.
func sourceAddrs(n int) []net.Addr {
	lo, hi := 32768, 60999
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			lo, _ = strconv.Atoi(f[0])
			hi, _ = strconv.Atoi(f[1])
		}
	}
	per := max((hi-lo+1)/2, 1)
	k := (n + per - 1) / per
	if k <= 1 {
		return []net.Addr{nil}
	}
	addrs := make([]net.Addr, 0, k)
	for i := 0; i < k && i < 250; i++ {
		addrs = append(addrs, &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))})
	}
	return addrs
}

func (o *opener) opened() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.conns)
}

func (o *opener) open() int { return o.opened() - int(o.closed.Load()) }

// openUpTo opens connections until target were opened; a failed one is
// counted and tried again, until -n failures in all. A shortfall shows in
// the step line (OPEN below CONNS) and on stderr.
func (o *opener) openUpTo(ctx context.Context, target int, srcs []net.Addr) {
	need := target - o.opened()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(o.cfg.parallel, need); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if int(i) >= need+int(o.failed.Load()) || o.failed.Load() > int64(o.cfg.n) {
					return
				}
				if err := o.openOne(ctx, srcs[int(i)%len(srcs)]); err != nil {
					if o.failed.Add(1) <= 5 {
						fmt.Fprintln(os.Stderr, "idleconns:", err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if n := o.opened(); n < target {
		fmt.Fprintf(os.Stderr, "idleconns: only %d of %d connections opened (%d failed)\n", n, target, o.failed.Load())
	}
}

// openOne dials, sends the request, reads the whole response and keeps the
// connection, with a goroutine that notices when the server closes it.
func (o *opener) openOne(ctx context.Context, src net.Addr) error {
	d := o.dialer
	d.LocalAddr = src
	d.Timeout = 10 * time.Second
	c, err := d.DialContext(ctx, "tcp", o.cfg.addr)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	exchange := o.exchange
	if o.cfg.h2 {
		exchange = o.exchangeH2
	}
	if c, err = exchange(c); err != nil {
		c.Close()
		return err
	}
	o.mu.Lock()
	if o.closing.Load() {
		o.mu.Unlock()
		c.Close()
		return errors.New("closing")
	}
	o.conns = append(o.conns, c)
	o.mu.Unlock()
	o.watchers.Add(1)
	go o.watch(c)
	return nil
}

func (o *opener) exchange(c net.Conn) (net.Conn, error) {
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return c, err
	}
	if _, err := c.Write(o.request); err != nil {
		return c, fmt.Errorf("request: %w", err)
	}
	br := bufio.NewReaderSize(c, 4096)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return c, fmt.Errorf("response: %w", err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return c, fmt.Errorf("response body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		o.not200.Add(1)
	}
	if resp.Close || br.Buffered() > 0 {
		return c, fmt.Errorf("server did not keep the connection (Connection: close or %d extra bytes)", br.Buffered())
	}
	return c, c.SetDeadline(time.Time{})
}

func (o *opener) watch(c net.Conn) {
	defer o.watchers.Done()
	var b [512]byte
	for { // what an idle HTTP/2 connection may still get (window updates, pings) is read away
		if _, err := c.Read(b[:]); err != nil {
			if !o.closing.Load() {
				o.closed.Add(1)
			}
			return
		}
	}
}

func (o *opener) closeAll() {
	o.mu.Lock()
	if o.closing.Swap(true) {
		o.mu.Unlock()
		return
	}
	for _, c := range o.conns {
		c.Close()
	}
	o.mu.Unlock()
	o.watchers.Wait()
}

// rss: VmRSS summed over the pids, kB (a process gone counts 0).
func rss(pids []int) int64 {
	var total int64
	for _, p := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				total += n
				break
			}
		}
	}
	return total
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
