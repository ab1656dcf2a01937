package purge

import (
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// quietRedis keeps go-redis's dial errors, expected here, off stderr.
var quietRedis sync.Once

// startRedis starts a real redis-server (testbed.StartRedis) or fails the
// test: the fan-out tests never skip. Kill and Restart keep its port, to
// simulate an outage and an instance change (no persistence: a restart is
// a new, empty instance).
func startRedis(t testing.TB) *testbed.Redis {
	t.Helper()
	quietRedis.Do(func() { redis.SetLogger(RedisLogger{Log: slog.New(slog.DiscardHandler)}) })
	return testbed.StartRedis(t)
}

// tcpCut forwards a loopback port to a target and can cut the link, to
// simulate one node losing its network while Redis and the others stay up.
type tcpCut struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu      sync.Mutex // guards cut, conns
	cut     bool
	conns   map[net.Conn]struct{}
	refused atomic.Int64 // connections refused while cut
}

func startCut(t testing.TB, target string) *tcpCut {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	p := &tcpCut{target: target, ln: ln, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// URL is the redis:// URL through the link.
func (p *tcpCut) URL() string { return "redis://" + p.ln.Addr().String() + "/0" }

func (p *tcpCut) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // listener closed
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			p.refused.Add(1)
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", p.target, time.Second)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *tcpCut) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src) // ends when either side closes
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut closes every forwarded connection and refuses new ones.
func (p *tcpCut) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Mend accepts connections again.
func (p *tcpCut) Mend() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

func (p *tcpCut) close() {
	_ = p.ln.Close() // ends accept; cannot fail otherwise
	p.Cut()
	p.wg.Wait()
}
