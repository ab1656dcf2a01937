package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// listenTCPList is the main listener of a listen list: every address's
// socket (inherited, or bound: an IPv4 address as IPv4 only and an IPv6
// one as IPv6 only, as nginx binds `listen 80; listen [::]:80;`, so that
// 0.0.0.0:80 and [::]:80 can both be bound), accepted from as one.
func (s *sockets) listenTCPList(ctx context.Context, addrs []string, idle time.Duration) (net.Listener, error) {
	var lns []net.Listener
	for _, a := range addrs {
		ln, err := s.listenTCPFamily(ctx, a, idle)
		if err != nil {
			return nil, errors.Join(err, closeListeners(lns))
		}
		lns = append(lns, ln)
	}
	return newMultiListener(lns), nil
}

func (s *sockets) listenTCPFamily(ctx context.Context, addr string, idle time.Duration) (net.Listener, error) {
	return s.listenOr(addr, func() (net.Listener, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		network := "tcp4"
		if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
			network = "tcp6"
		}
		var lc net.ListenConfig
		if idle > 0 {
			lc.KeepAlive = -1 // as proxy.ListenTCP
		}
		return lc.Listen(ctx, network, addr)
	})
}

func closeListeners(lns []net.Listener) error {
	var errs []error
	for _, ln := range lns {
		errs = append(errs, ln.Close())
	}
	return errors.Join(errs...)
}

// multiListener accepts from several listeners. A connection one of
// its goroutines accepted as its socket closed (a stop, or an upgrade's
// handover closing the sockets underneath) is handed out all the same:
// its client has sent, or is about to send, a request that nobody
// retries on a connection that never answered (proxy/conns/drain.go).
// So Accept hands out what the goroutines held, and reports
// net.ErrClosed once every socket is closed and they have all returned;
// the server goes on calling it until then, as it does for
// conns.Listener.
type multiListener struct {
	lns   []net.Listener
	conns chan net.Conn
	left  chan net.Conn // what each goroutine held as Close began: one each at most
	errs  chan error
	done  chan struct{} // Close began
	ended chan struct{} // every goroutine returned: every socket is closed
	once  sync.Once
}

func newMultiListener(lns []net.Listener) *multiListener {
	m := &multiListener{lns: lns, conns: make(chan net.Conn), left: make(chan net.Conn, len(lns)),
		errs: make(chan error), done: make(chan struct{}), ended: make(chan struct{})}
	var wg sync.WaitGroup
	for _, ln := range lns {
		wg.Add(1)
		go func() { defer wg.Done(); m.accept(ln) }()
	}
	go func() { wg.Wait(); close(m.ended) }()
	return m
}

func (m *multiListener) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		var ne net.Error
		switch {
		case errors.Is(err, net.ErrClosed):
			return // by Close, or underneath by a handover
		case errors.As(err, &ne) && ne.Timeout():
			continue
		case err != nil:
			// Out of descriptors, say: the server's accept loop backs off
			// (conns.Listener) and asks again.
			select {
			case m.errs <- fmt.Errorf("%s: %w", ln.Addr(), err):
				continue
			case <-m.done:
				return
			}
		}
		select {
		case m.conns <- c:
		case <-m.done:
			m.left <- c // accepted as the list closed: Accept hands it out
			return
		}
	}
}

// Accept returns the next connection of any listener, or an error one of
// them met; once every socket is closed and what was accepted handed
// out, net.ErrClosed.
func (m *multiListener) Accept() (net.Conn, error) {
	for {
		select {
		case c := <-m.conns:
			return c, nil
		case c := <-m.left:
			return c, nil
		case err := <-m.errs:
			if !m.closed() { // once closed, what is held comes first (conns.Listener stops at an error)
				return nil, err
			}
		case <-m.ended:
			select { // every goroutine returned: all they held is in m.left
			case c := <-m.left:
				return c, nil
			default:
				return nil, net.ErrClosed
			}
		}
	}
}

func (m *multiListener) closed() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

func (m *multiListener) Close() error {
	var err error
	m.once.Do(func() {
		close(m.done)
		err = closeListeners(m.lns)
	})
	return err
}

func (m *multiListener) Addr() net.Addr { return m.lns[0].Addr() }
