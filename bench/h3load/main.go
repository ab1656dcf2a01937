// Command h3load is a small HTTP/3 load generator on quic-go's client,
// shaped like nghttp2's h2load so that bench/run reads both the same way:
// -c connections, -m concurrent streams each, -n requests in all, and
// h2load's summary lines (finished in, requests:, status codes:,
// traffic:, time for request:, TLS Protocol/Cipher/Application protocol).
//
// Two more modes for the handshake and memory rows:
//
//	-handshakes N [-resume] [-h2]   N fresh connections one after the
//	    other, each timed from dial to the first byte of a GET's answer:
//	    1-RTT, or with -resume a session ticket from the one before (0-RTT
//	    for h3: GET sent as early data); -h2 does the same over TLS + HTTP/2
//	    for the comparison. Prints "ttfb: p50 P p99 P mean M (ms), N
//	    connections, R resumed (0-RTT E)".
//	-hold D                         -c connections, one request each, then
//	    held open and idle for D (h2load's -D), for the server's RSS.
//
// It only connects to loopback addresses (the URL's host must be one) and
// stops by itself: -n requests, -handshakes connections, or -hold, bounded
// by -timeout.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"
)

type config struct {
	url        *url.URL
	conns      int
	streams    int
	requests   int
	handshakes int
	resume     bool
	h2         bool
	std        bool // the load over net/http and http3.Transport instead of h3load's own requests
	hold       time.Duration
	timeout    time.Duration
	insecure   bool
	ciphers    string // h2load's --tls13-ciphers: checked against what was negotiated
	out, head  string // -o, -dump-header: one request's body and header, as curl's -o and -D
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "h3load:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	switch {
	case cfg.out != "":
		err = once(ctx, cfg)
	case cfg.handshakes > 0:
		err = handshakes(ctx, cfg)
	case cfg.hold > 0:
		err = hold(ctx, cfg)
	default:
		err = load(ctx, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "h3load:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("h3load", flag.ContinueOnError)
	fs.IntVar(&c.conns, "c", 1, "connections")
	fs.IntVar(&c.streams, "m", 1, "concurrent requests (streams) per connection")
	fs.IntVar(&c.requests, "n", 1, "requests in all")
	fs.IntVar(&c.handshakes, "handshakes", 0, "time this many fresh connections, one after the other, instead of a load")
	fs.BoolVar(&c.resume, "resume", false, "with -handshakes: resume each connection's session (h3: 0-RTT GET)")
	fs.BoolVar(&c.h2, "h2", false, "with -handshakes: over TLS + HTTP/2 instead of HTTP/3")
	fs.BoolVar(&c.std, "std", false, "send the load through net/http and quic-go's http3.Transport (costs the client about 3x more CPU per request)")
	fs.DurationVar(&c.hold, "hold", 0, "open -c connections, one request each, and hold them idle this long")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "stop after this long whatever is left")
	fs.BoolVar(&c.insecure, "k", true, "do not verify the certificate (loopback benchmarks)")
	fs.StringVar(&c.ciphers, "tls13-ciphers", "", "the TLS 1.3 suite expected (Go chooses it; this checks it)")
	fs.StringVar(&c.out, "o", "", "fetch the URL once, write the body here (and the header to -dump-header) and exit")
	fs.StringVar(&c.head, "dump-header", "", "with -o: write the status line and header fields here")
	fs.Int("t", 1, "threads (accepted for h2load's command line; Go schedules the goroutines)")
	if err := fs.Parse(splitShort(args)); err != nil {
		return c, err
	}
	if fs.NArg() != 1 {
		return c, errors.New("usage: h3load [flags] https://127.0.0.1:PORT/path")
	}
	u, err := url.Parse(fs.Arg(0))
	if err != nil {
		return c, err
	}
	ip := net.ParseIP(u.Hostname())
	if u.Scheme != "https" || ip == nil || !ip.IsLoopback() {
		return c, fmt.Errorf("%s: only https://127.0.0.0/8 or [::1] URLs (loopback benchmarks)", u)
	}
	if c.conns < 1 || c.streams < 1 || c.requests < 1 || c.handshakes < 0 {
		return c, errors.New("-c, -m and -n must be at least 1")
	}
	c.url = u
	return c, nil
}

// splitShort turns h2load's glued short flags ("-c100", "-m10", "-t1")
// into the "-c 100" Go's flag package reads.
func splitShort(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if len(a) > 2 && a[0] == '-' && strings.ContainsRune("tcnm", rune(a[1])) && a[2] >= '0' && a[2] <= '9' {
			out = append(out, a[:2], a[2:])
			continue
		}
		out = append(out, a)
	}
	return out
}

func (c config) tlsConfig(cache tls.ClientSessionCache) *tls.Config {
	return &tls.Config{InsecureSkipVerify: c.insecure, ClientSessionCache: cache} //nolint:gosec // loopback benchmark of a self-signed server
}

// counts are what h2load reports.
type counts struct {
	next                      atomic.Int64 // requests taken by the workers, to stop at -n
	done, ok, failed, errored atomic.Int64
	status                    [6]atomic.Int64 // by class: 1xx..5xx
	bytes                     atomic.Int64
	mu                        sync.Mutex // guards lat and firstErr
	lat                       []time.Duration
	firstErr                  error // the first request's error, reported on stderr
}

func (n *counts) add(status int, body int64, d time.Duration, err error) {
	if n.count(status, body, err) {
		n.mu.Lock()
		n.lat = append(n.lat, d)
		n.mu.Unlock()
	}
}

// count counts one request but not its latency; it reports whether
// there was an answer whose latency counts.
func (n *counts) count(status int, body int64, err error) bool {
	n.done.Add(1)
	if err != nil {
		if n.errored.Add(1) == 1 {
			n.mu.Lock()
			n.firstErr = err
			n.mu.Unlock()
		}
		return false
	}
	if status/100 < len(n.status) {
		n.status[status/100].Add(1)
	}
	if status/100 == 2 {
		n.ok.Add(1)
	} else {
		n.failed.Add(1)
	}
	n.bytes.Add(body)
	return true
}

// load runs -n requests over -c connections with -m streams each, like
// h2load, and prints its summary. Each stream's worker keeps its own
// latencies (no lock per request); they are merged at the end.
func load(ctx context.Context, c config) error {
	var n counts
	var tlsState atomic.Pointer[tls.ConnectionState]
	start := time.Now()
	if c.std {
		n.loadStd(ctx, c, &tlsState)
	} else {
		n.loadOwn(ctx, c, &tlsState)
	}
	report(os.Stdout, &n, time.Since(start), tlsState.Load(), c)
	if n.firstErr != nil {
		fmt.Fprintf(os.Stderr, "h3load: %d requests errored; the first: %v\n", n.errored.Load(), n.firstErr)
	}
	return ctx.Err()
}

// loadOwn is the load over h3load's own requests (raw.go).
func (n *counts) loadOwn(ctx context.Context, c config, tlsState *atomic.Pointer[tls.ConnectionState]) {
	var wg sync.WaitGroup
	for range c.conns {
		wg.Go(func() {
			rc, err := dialRaw(ctx, c)
			if err != nil {
				for range c.streams {
					if n.next.Add(1) <= int64(c.requests) {
						n.add(0, 0, 0, err)
					}
				}
				return
			}
			defer rc.close()
			tlsState.CompareAndSwap(nil, rc.state())
			var cw sync.WaitGroup
			for range c.streams {
				cw.Go(func() {
					g := newGetter(rc)
					n.drive(ctx, c, func() (int, int64, error) { return g.do(ctx) })
				})
			}
			cw.Wait()
		})
	}
	wg.Wait()
}

// loadStd is the load through net/http and http3.Transport.
func (n *counts) loadStd(ctx context.Context, c config, tlsState *atomic.Pointer[tls.ConnectionState]) {
	var wg sync.WaitGroup
	for range c.conns {
		tr := &http3.Transport{TLSClientConfig: c.tlsConfig(nil), QUICConfig: &quic.Config{MaxIdleTimeout: time.Minute}}
		defer tr.Close()
		client := &http.Client{Transport: tr}
		for range c.streams {
			wg.Go(func() {
				n.drive(ctx, c, func() (int, int64, error) {
					status, body, state, err := fetch(ctx, client, c.url.String(), http.MethodGet)
					if state != nil {
						tlsState.CompareAndSwap(nil, state)
					}
					return status, body, err
				})
			})
		}
	}
	wg.Wait()
}

// drive sends requests with do, one after the other, until -n are
// taken; latencies are kept locally (no lock per request) and merged at
// the end.
func (n *counts) drive(ctx context.Context, c config, do func() (int, int64, error)) {
	lat := make([]time.Duration, 0, c.requests/(c.conns*c.streams)+1)
	for n.next.Add(1) <= int64(c.requests) && ctx.Err() == nil {
		t0 := time.Now()
		status, body, err := do()
		d := time.Since(t0)
		if n.count(status, body, err) {
			lat = append(lat, d)
		}
	}
	n.mu.Lock()
	n.lat = append(n.lat, lat...)
	n.mu.Unlock()
}

func fetch(ctx context.Context, client *http.Client, u, method string) (int, int64, *tls.ConnectionState, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return 0, 0, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, nil, err
	}
	defer resp.Body.Close()
	nb, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nb, resp.TLS, err
}

// once fetches the URL, for bench/run's check of the bytes and of
// Cache-Status (curl here has no HTTP/3).
func once(ctx context.Context, c config) error {
	tr := &http3.Transport{TLSClientConfig: c.tlsConfig(nil)}
	defer tr.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url.String(), nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.out, body, 0o644); err != nil {
		return err
	}
	if c.head == "" {
		return nil
	}
	var h strings.Builder
	fmt.Fprintf(&h, "%s %s\r\n", resp.Proto, resp.Status)
	_ = resp.Header.Write(&h) // writes to memory
	return os.WriteFile(c.head, []byte(h.String()), 0o644)
}

// report prints h2load's summary lines.
func report(w io.Writer, n *counts, elapsed time.Duration, st *tls.ConnectionState, c config) {
	rps := float64(n.done.Load()) / elapsed.Seconds()
	fmt.Fprintf(w, "finished in %.2fs, %.2f req/s, %.2fMB/s\n", elapsed.Seconds(), rps, float64(n.bytes.Load())/elapsed.Seconds()/1e6)
	fmt.Fprintf(w, "requests: %d total, %d started, %d done, %d succeeded, %d failed, %d errored, 0 timeout\n",
		c.requests, n.done.Load(), n.done.Load(), n.ok.Load(), n.failed.Load(), n.errored.Load())
	fmt.Fprintf(w, "status codes: %d 2xx, %d 3xx, %d 4xx, %d 5xx\n", n.status[2].Load(), n.status[3].Load(), n.status[4].Load(), n.status[5].Load())
	fmt.Fprintf(w, "traffic: %d (%d) total, 0 (0) headers (space savings 0.00%%), %d (%d) data\n",
		n.bytes.Load(), n.bytes.Load(), n.bytes.Load(), n.bytes.Load())
	n.mu.Lock()
	lat := slices.Clone(n.lat)
	n.mu.Unlock()
	mn, mx, mean, sd := stats(lat)
	fmt.Fprintf(w, "                     min         max         mean         sd        +/- sd\n")
	fmt.Fprintf(w, "time for request: %9s %11s %11s %11s\n", ms(mn), ms(mx), ms(mean), ms(sd))
	if st != nil {
		fmt.Fprintf(w, "TLS Protocol: TLSv1.3\nCipher: %s\nApplication protocol: %s\n", tls.CipherSuiteName(st.CipherSuite), st.NegotiatedProtocol)
		if c.ciphers != "" && c.ciphers != tls.CipherSuiteName(st.CipherSuite) {
			fmt.Fprintf(w, "warning: negotiated %s, not %s\n", tls.CipherSuiteName(st.CipherSuite), c.ciphers)
		}
	}
	if p := pct(lat, 0.5); p > 0 {
		fmt.Fprintf(w, "latency: p50 %s p99 %s\n", ms(p), ms(pct(lat, 0.99)))
	}
}

func stats(d []time.Duration) (mn, mx, mean, sd time.Duration) {
	if len(d) == 0 {
		return
	}
	mn, mx = slices.Min(d), slices.Max(d)
	var sum float64
	for _, x := range d {
		sum += float64(x)
	}
	m := sum / float64(len(d))
	var v float64
	for _, x := range d {
		v += (float64(x) - m) * (float64(x) - m)
	}
	return mn, mx, time.Duration(m), time.Duration(sqrt(v / float64(len(d))))
}

func sqrt(x float64) float64 {
	z := x / 2
	for range 50 {
		if z == 0 {
			return 0
		}
		z -= (z*z - x) / (2 * z)
	}
	return z
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// ms is h2load's spelling of a duration: "1.23ms" or "456us".
func ms(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%dus", d.Microseconds())
	}
	return fmt.Sprintf("%.2fms", float64(d)/1e6)
}

// handshakes times -handshakes fresh connections, one after the other:
// dial to the first byte of a GET's answer.
func handshakes(ctx context.Context, c config) error {
	cache := tls.NewLRUClientSessionCache(4)
	var ttfb []time.Duration
	resumed, early := 0, 0
	for i := 0; i < c.handshakes && ctx.Err() == nil; i++ {
		var cc tls.ClientSessionCache
		if c.resume {
			cc = cache
		}
		d, res, e, err := oneConn(ctx, c, cc)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i+1, err)
		}
		if i == 0 && c.resume {
			continue // it only fetched the first ticket
		}
		ttfb = append(ttfb, d)
		if res {
			resumed++
		}
		if e {
			early++
		}
	}
	_, _, mean, _ := stats(ttfb)
	proto := "h3"
	if c.h2 {
		proto = "h2"
	}
	fmt.Printf("ttfb: p50 %.3f p99 %.3f mean %.3f (ms), %d %s connections, %d resumed (0-RTT %d)\n",
		float64(pct(ttfb, 0.5))/1e6, float64(pct(ttfb, 0.99))/1e6, float64(mean)/1e6, len(ttfb), proto, resumed, early)
	return nil
}

// oneConn opens a connection, GETs the URL and times the first byte;
// it reports whether the session was resumed and the GET went as 0-RTT.
func oneConn(ctx context.Context, c config, cache tls.ClientSessionCache) (time.Duration, bool, bool, error) {
	tc := c.tlsConfig(cache)
	if c.h2 {
		return oneH2(ctx, c, tc)
	}
	tr := &http3.Transport{TLSClientConfig: tc, QUICConfig: &quic.Config{}}
	defer tr.Close()
	method := http.MethodGet
	if cache != nil {
		method = http3.MethodGet0RTT
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url.String(), nil)
	if err != nil {
		return 0, false, false, err
	}
	var conn *quic.Conn
	t0 := time.Now()
	tr.Dial = func(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
		var err error
		conn, err = quic.DialAddrEarly(ctx, addr, tc, qc)
		return conn, err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, false, false, err
	}
	var b [1]byte
	_, err = io.ReadFull(resp.Body, b[:])
	d := time.Since(t0)
	_, _ = io.Copy(io.Discard, resp.Body) // the rest is not timed
	resp.Body.Close()
	if err != nil {
		return 0, false, false, err
	}
	// The answer came after the handshake, or with it: its state is final.
	<-conn.HandshakeComplete()
	st := conn.ConnectionState()
	return d, st.TLS.DidResume, st.Used0RTT, nil
}

func oneH2(ctx context.Context, c config, tc *tls.Config) (time.Duration, bool, bool, error) {
	tc.NextProtos = []string{"h2"}
	t0 := time.Now()
	d := tls.Dialer{Config: tc}
	nc, err := d.DialContext(ctx, "tcp", c.url.Host)
	if err != nil {
		return 0, false, false, err
	}
	defer nc.Close()
	tconn := nc.(*tls.Conn)
	cc, err := (&http2.Transport{}).NewClientConn(tconn)
	if err != nil {
		return 0, false, false, err
	}
	defer cc.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url.String(), nil)
	if err != nil {
		return 0, false, false, err
	}
	resp, err := cc.RoundTrip(req)
	if err != nil {
		return 0, false, false, err
	}
	var b [1]byte
	_, err = io.ReadFull(resp.Body, b[:])
	dur := time.Since(t0)
	_, _ = io.Copy(io.Discard, resp.Body) // not timed
	resp.Body.Close()
	return dur, tconn.ConnectionState().DidResume, false, err
}

// hold opens -c connections, one request each, and keeps them open and
// idle for -hold.
func hold(ctx context.Context, c config) error {
	var opened, failed atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64) // handshakes in flight at once
	var trs []*http3.Transport
	var mu sync.Mutex
	for range c.conns {
		tr := &http3.Transport{TLSClientConfig: c.tlsConfig(nil), QUICConfig: &quic.Config{MaxIdleTimeout: c.hold + time.Minute, KeepAlivePeriod: 10 * time.Second}}
		mu.Lock()
		trs = append(trs, tr)
		mu.Unlock()
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if status, _, _, err := fetch(ctx, &http.Client{Transport: tr}, c.url.String(), http.MethodGet); err != nil || status != 200 {
				failed.Add(1)
				return
			}
			opened.Add(1)
		})
	}
	wg.Wait()
	fmt.Printf("open: %d connections, %d failed; holding %v\n", opened.Load(), failed.Load(), c.hold)
	select {
	case <-time.After(c.hold):
	case <-ctx.Done():
	}
	for _, tr := range trs {
		tr.Close()
	}
	fmt.Printf("requests: %d total, %d started, %d done, %d succeeded, %d failed, 0 errored, 0 timeout\n",
		c.conns, c.conns, c.conns, opened.Load(), failed.Load())
	return nil
}
