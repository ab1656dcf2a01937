package handshake

import (
	"errors"
	"net"
	"sync"
	"time"
)

// Func prepares a new connection: it returns the connection to serve, or
// an error, and then c is closed. It must bound its own reads (a read
// deadline); Close cuts them short by closing the connection.
type Func func(c net.Conn) (net.Conn, error)

// Listener hands out the connections prepare accepted.
type Listener struct {
	net.Listener
	prepare Func

	ready      chan net.Conn
	failed     chan error // a failed accept, handed to the next Accept
	closed     chan struct{}
	closeOnce  sync.Once
	acceptDone chan struct{} // closed when acceptLoop returns: the preparers ended too
	acceptErr  error         // set before acceptDone closes
	preparers  sync.WaitGroup
	cut        chan struct{} // closed when drainGrace ended after accepting did

	mu      sync.Mutex // guards pending
	pending map[net.Conn]struct{}
}

// NewListener accepts from ln at once, preparing each connection.
func NewListener(ln net.Listener, prepare Func) *Listener {
	l := &Listener{Listener: ln, prepare: prepare, ready: make(chan net.Conn), failed: make(chan error),
		closed: make(chan struct{}), cut: make(chan struct{}),
		acceptDone: make(chan struct{}), pending: make(map[net.Conn]struct{})}
	go l.acceptLoop()
	return l
}

// drainGrace is how long the connections being prepared when accepting
// ends get to finish, and to be handed out, before they are closed: a
// client sends its first bytes as soon as it connects, and a connection
// this process accepted is its own to answer (no client retries a
// request on a connection that never served one).
const drainGrace = time.Second

// acceptLoop accepts until the inner listener is closed, then lets the
// preparers finish (finish). Any other failure (out of file descriptors)
// is handed to the next Accept caller, and the loop waits for it: the
// caller, who knows how long to back off, paces the retries, and the
// loop never spins.
func (l *Listener) acceptLoop() {
	defer close(l.acceptDone)
	defer l.finish()
	for {
		c, err := l.Listener.Accept()
		if errors.Is(err, net.ErrClosed) {
			l.acceptErr = err
			return
		}
		if err != nil {
			select {
			case l.failed <- err:
				continue
			case <-l.closed:
				l.acceptErr = net.ErrClosed
				return
			}
		}
		l.mu.Lock()
		l.pending[c] = struct{}{}
		l.mu.Unlock()
		l.preparers.Add(1)
		go l.handshake(c)
	}
}

func (l *Listener) handshake(c net.Conn) {
	defer l.preparers.Done()
	ready, err := l.prepare(c)
	l.mu.Lock()
	delete(l.pending, c)
	l.mu.Unlock()
	if err != nil {
		_ = c.Close() // prepare refused it and said why to whom it concerns
		return
	}
	select {
	case l.ready <- ready:
	case <-l.cut:
		_ = c.Close() // nobody took it within the grace
	}
}

// finish waits for the preparers once accepting ended, for up to the
// grace, then cuts short those still preparing or waiting to be handed
// out: closed, not given a past deadline (a preparer may be just about
// to set its own deadline, which would win over ours).
func (l *Listener) finish() {
	t := time.AfterFunc(drainGrace, func() {
		close(l.cut)
		l.mu.Lock()
		for c := range l.pending {
			_ = c.Close()
		}
		l.mu.Unlock()
	})
	l.preparers.Wait()
	if t.Stop() {
		close(l.cut)
	}
}

// Accept returns the next prepared connection; once accepting ended,
// those still prepared within the grace, then the inner listener's end.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case err := <-l.failed:
		return nil, err
	case <-l.acceptDone:
		return nil, l.acceptErr
	}
}

// Close stops accepting and waits for the connections being prepared:
// those prepared within the grace are handed out by Accept, which the
// server must go on calling until it fails; the others are cut short.
func (l *Listener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.closed)
		err = l.Listener.Close()
		<-l.acceptDone
	})
	return err
}

var _ net.Listener = (*Listener)(nil)
