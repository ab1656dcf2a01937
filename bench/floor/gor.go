package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"sync"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/rawsock"
)

// acceptBackoff is the pause after a failed accept (out of descriptors):
// time for connections to close instead of a spinning loop.
const acceptBackoff = 10 * time.Millisecond

// serveGor answers each connection of ln on a goroutine of its own until
// ctx is done. It closes ln and every connection before it returns.
func serveGor(ctx context.Context, ln net.Listener, pages *store) error {
	return serveEach(ctx, ln, func(c net.Conn) { serveGorConn(c, pages) })
}

// serveEach runs serve on a goroutine of its own for each connection of
// ln until ctx is done, then closes ln and every connection and waits
// for the goroutines.
func serveEach(ctx context.Context, ln net.Listener, serve func(net.Conn)) error {
	var conns connSet
	var wg sync.WaitGroup
	defer wg.Wait()
	defer conns.closeAll()
	defer ln.Close()
	release := onStop(ctx, func() { ln.Close() })
	defer release()
	for {
		c, err := ln.Accept()
		switch {
		case ctx.Err() != nil:
			if c != nil {
				c.Close()
			}
			return nil
		case errors.Is(err, net.ErrClosed):
			return fmt.Errorf("accept: %w", err)
		case err != nil:
			log.Printf("floor: accept: %v", err)
			time.Sleep(acceptBackoff)
			continue
		}
		conns.add(c)
		wg.Go(func() {
			defer conns.remove(c)
			serve(c)
		})
	}
}

// serveGorConn answers c until it fails or its client closes it. Its
// errors are the client's business (a reset, a refused request): the
// connection is closed and that is all.
func serveGorConn(c net.Conn, pages *store) {
	defer c.Close()
	sock, ok := rawsock.New(c)
	if !ok {
		log.Printf("floor: %T has no socket to read raw", c)
		return
	}
	r := responder{pages: pages}
	box := newInbox()
	for {
		n, err := sock.Read(box.free())
		if err != nil {
			return
		}
		if err := box.took(n, &r, sock); err != nil {
			return
		}
	}
}

// A connSet is the open connections, for closing them when the server
// stops.
type connSet struct {
	mu sync.Mutex
	m  map[net.Conn]struct{}
}

func (s *connSet) add(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[net.Conn]struct{}{}
	}
	s.m[c] = struct{}{}
}

func (s *connSet) remove(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, c)
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.m {
		c.Close()
	}
}
