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

// multiListener accepts from several listeners.
type multiListener struct {
	lns   []net.Listener
	conns chan net.Conn
	errs  chan error
	done  chan struct{}
	once  sync.Once
}

func newMultiListener(lns []net.Listener) *multiListener {
	m := &multiListener{lns: lns, conns: make(chan net.Conn), errs: make(chan error, len(lns)), done: make(chan struct{})}
	for _, ln := range lns {
		go m.accept(ln)
	}
	return m
}

func (m *multiListener) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			m.errs <- fmt.Errorf("%s: %w", ln.Addr(), err)
			return
		}
		select {
		case m.conns <- c:
		case <-m.done:
			_ = c.Close() // accepted as the listener closed: nobody serves it
			return
		}
	}
}

// Accept returns the next connection of any listener; once one of them
// fails (closed: a shutdown or a handover), it fails.
func (m *multiListener) Accept() (net.Conn, error) {
	select {
	case c := <-m.conns:
		return c, nil
	case err := <-m.errs:
		_ = m.Close() // one fails: they all stop
		return nil, err
	case <-m.done:
		return nil, net.ErrClosed
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
