// Command parkedheap measures the live Go heap an idle HTTP/1.1
// keep-alive connection costs ramjet's listener (proxy.NewServer, a
// trivial handler, parking on unless -park=false): it opens -n loopback
// connections in this process, one request each, waits until they are
// parked, collects garbage and prints HeapAlloc before and after per
// connection (the client's side of each connection, about 290 B, is
// included), with -heapprofile a heap profile of every allocation for
// `go tool pprof -sample_index=inuse_space -focus=acceptLoop`. Unlike
// RSS under bench/idleconns, the number does not depend on when the
// runtime last collected garbage.
//
//	go run ./bench/parkedheap -n 5000 -heapprofile /tmp/heap.pb.gz
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy"
)

func main() {
	n := flag.Int("n", 5000, "connections (two descriptors each in this process)")
	park := flag.Bool("park", true, "park idle connections (server.park_idle)")
	profile := flag.String("heapprofile", "", "write a heap profile of every allocation here")
	flag.Parse()
	if err := run(*n, *park, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "parkedheap:", err)
		os.Exit(1)
	}
}

func run(n int, park bool, profile string) error {
	runtime.MemProfileRate = 1
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	body := make([]byte, 725)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s := proxy.NewServer(proxy.ServerConfig{Name: "main", Listener: ln, IdleTimeout: 2 * time.Minute,
		HeaderTimeout: 10 * time.Second, MaxConns: n + 100, NoParking: !park}, func(ctx *fasthttp.RequestCtx) { ctx.SetBody(body) }, log)
	if err := s.Start(context.Background()); err != nil {
		return err
	}
	before := live()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := open(ln.Addr().String())
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	time.Sleep(3 * time.Second) // past every linger: all parked
	after := live()
	fmt.Printf("connections %d, park %v: heap %d -> %d B, %.0f B per connection, goroutines %d\n",
		n, park, before, after, float64(after-before)/float64(n), runtime.NumGoroutine())
	if profile == "" {
		return nil
	}
	f, err := os.Create(profile)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// live is the heap after two collections (a sync.Pool keeps what it
// held through one) with the free memory given back.
func live() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// open connects and asks for one page, leaving the connection open.
func open(addr string) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		return nil, err
	}
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	if err := resp.Read(bufio.NewReaderSize(c, 4096)); err != nil {
		return nil, err
	}
	return c, nil
}
