package conns

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lot is the epoll set of parked connections and its poller goroutine.
// The poller does not hold an OS thread: the epoll descriptor is itself
// registered with Go's netpoller (an epoll set is readable while it has
// events), so the goroutine sleeps like any reader until a parked
// connection has bytes or its deadline comes.
type lot struct {
	l    *Listener
	epfd int
	file *os.File // epfd, pollable through Go's netpoller
	raw  syscall.RawConn
	done chan struct{} // the poller's end

	settler  *settler       // lotSettler's as the lot was made
	releases sync.WaitGroup // the release the poller started (settler.run), if one runs

	stop chan struct{} // close began: a wake no longer waits for Accept

	mu       sync.Mutex // guards byFD, byTime, closed, draining, parks
	parks    uint64
	byFD     map[int32]*Conn
	byTime   deadlines
	closed   bool
	draining bool // only connections not heard yet park (drain.go)
}

// never is the deadline of a connection parked without one.
const never = time.Duration(math.MaxInt64)

// sweep bounds how late past its deadline a parked connection closes:
// the poller waits at most this long between looks at the deadlines.
const sweep = time.Second

func newLot(l *Listener) (*lot, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("conns: epoll_create1: %w", err)
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		_ = unix.Close(epfd)
		return nil, fmt.Errorf("conns: epoll fd: %w", err)
	}
	f := os.NewFile(uintptr(epfd), "conns-epoll")
	raw, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("conns: epoll fd: %w", err)
	}
	if err := f.SetReadDeadline(time.Now().Add(sweep)); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("conns: epoll fd is not pollable: %w", err)
	}
	return &lot{l: l, epfd: epfd, file: f, raw: raw, done: make(chan struct{}), stop: make(chan struct{}), byFD: make(map[int32]*Conn),
		settler: lotSettler}, nil
}

func (p *lot) start() { go p.poll() }

// park puts c (moved to stParked by its Close) in the set, detached
// from Go's runtime where it can be, or closes it when the lot is closed
// (or draining, unless c was not heard yet) or the kernel refuses.
func (p *lot) park(c *Conn) {
	c.detach()
	by := never
	if !c.parkBy.IsZero() {
		by = c.parkBy.Sub(epoch)
	}
	p.mu.Lock()
	if p.closed || p.draining && !c.unheard.Load() {
		p.mu.Unlock()
		p.closeParked(c)
		return
	}
	p.byFD[int32(c.fd)] = c
	parkedNow.Add(1)
	p.parks++
	c.by, c.parkedAt = by, time.Since(epoch)
	heap.Push(&p.byTime, c)
	// In the set exactly while parked (one shot; the wake takes it out):
	// whether it is needs no field of its own.
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(c.fd)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		p.removeLocked(c)
		p.mu.Unlock()
		p.l.log.Debug("parking a connection failed; closed", "listener", p.l.cfg.Name, "err", err)
		p.closeParked(c)
		return
	}
	p.mu.Unlock()
}

// forget takes a parked c out of the set; its Close is closing it.
func (p *lot) forget(c *Conn) {
	p.mu.Lock()
	p.removeLocked(c)
	p.mu.Unlock()
}

func (p *lot) removeLocked(c *Conn) {
	if c.heapIdx >= 0 {
		heap.Remove(&p.byTime, int(c.heapIdx))
	}
	if p.byFD[int32(c.fd)] == c {
		delete(p.byFD, int32(c.fd))
		parkedNow.Add(-1)
	}
}

// closeParked closes a c the lot took out of the set, unless something
// else closed it first.
func (p *lot) closeParked(c *Conn) {
	if c.state.CompareAndSwap(stParked, stClosed) {
		_ = c.closeSocket() // an idle connection: nobody to tell
	}
}

// count is how many connections are parked, and were so far.
func (p *lot) count() (int64, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(len(p.byFD)), p.parks
}

// drain closes the parked connections that were heard, and those that
// park from now on; the others stay parked until close, and are woken
// and handed out as before when their request comes.
func (p *lot) drain() {
	p.mu.Lock()
	p.draining = true // from here a heard one that parks is closed (park)
	p.mu.Unlock()
	p.closeWhere(func(c *Conn) bool { return !c.unheard.Load() })
}

// close stops the poller, closes every parked connection and waits for
// a release the poller started.
func (p *lot) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	_ = p.file.SetReadDeadline(time.Now()) // wakes the poller
	<-p.done
	p.releases.Wait()
}

func (p *lot) poll() {
	defer close(p.done)
	events := make([]unix.EpollEvent, 128)
	var n int
	var werr error
	wait := func(fd uintptr) bool {
		n, werr = unix.EpollWait(int(fd), events, 0)
		if errors.Is(werr, unix.EINTR) {
			n, werr = 0, nil
		}
		return n > 0 || werr != nil
	}
	for {
		n, werr = 0, nil
		err := p.raw.Read(wait)
		if p.isClosed() {
			p.closeAll()
			_ = p.file.Close()
			return
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) || werr != nil {
			p.l.log.Error("parked connections: epoll failed; closing them", "listener", p.l.cfg.Name, "err", errors.Join(err, werr))
			p.closeAll()
			p.mu.Lock()
			p.closed = true
			p.mu.Unlock()
			_ = p.file.Close()
			return
		}
		now := time.Now()
		for i := range events[:n] {
			p.wake(events[i].Fd, now)
		}
		next := p.expire(now)
		p.settle(now)
		_ = p.file.SetReadDeadline(next) // a pollable file: cannot fail
	}
}

// settle gives memory back after a burst of parks (settle.go), on a
// goroutine close waits for.
func (p *lot) settle(now time.Time) {
	if !p.settler.settle(now) {
		return
	}
	p.releases.Add(1)
	go func() {
		defer p.releases.Done()
		p.settler.run()
	}()
}

func (p *lot) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// wake hands the parked connection on fd back to the server.
func (p *lot) wake(fd int32, now time.Time) {
	p.mu.Lock()
	c := p.byFD[fd]
	if c == nil {
		p.mu.Unlock()
		return // closed since the event
	}
	p.removeLocked(c)
	p.mu.Unlock()
	if !c.state.CompareAndSwap(stParked, stServing) {
		return // closed meanwhile
	}
	// Out of the set before the connection is served: a detached one's
	// descriptor closes as it attaches (the set keeps an entry while any
	// descriptor of the socket is open, and would report the closed
	// number), and one parked attached may be detached at its next park.
	_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
	if err := c.attach(); err != nil {
		p.l.log.Debug("waking a parked connection failed; closed", "listener", p.l.cfg.Name, "err", err)
		c.state.Store(stClosed)
		p.l.release(c)
		return
	}
	c.rearm(now)
	select {
	case p.l.woken <- c:
	case <-p.stop:
		_ = c.Close()
	}
}

// expire closes the connections whose idle time is up and returns when
// the poller should look again.
func (p *lot) expire(now time.Time) time.Time {
	next := now.Add(sweep)
	for {
		p.mu.Lock()
		if len(p.byTime) == 0 || p.byTime[0].by > now.Sub(epoch) {
			if len(p.byTime) > 0 && p.byTime[0].by < next.Sub(epoch) {
				next = epoch.Add(p.byTime[0].by)
			}
			p.mu.Unlock()
			return next
		}
		c := p.byTime[0]
		p.removeLocked(c)
		p.mu.Unlock()
		p.closeParked(c)
	}
}

func (p *lot) closeAll() { p.closeWhere(func(*Conn) bool { return true }) }

// closeWhere takes the parked connections pick chooses out of the set
// and closes them.
func (p *lot) closeWhere(pick func(*Conn) bool) {
	p.mu.Lock()
	var out []*Conn
	for _, c := range p.byFD {
		if pick(c) {
			out = append(out, c)
		}
	}
	for _, c := range out {
		p.removeLocked(c)
	}
	p.mu.Unlock()
	for _, c := range out {
		p.closeParked(c)
	}
}

// deadlines is a min-heap of parked connections by deadline; each
// Conn's heapIdx follows its place.
type deadlines []*Conn

func (h deadlines) Len() int           { return len(h) }
func (h deadlines) Less(i, j int) bool { return h[i].by < h[j].by }
func (h deadlines) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = int32(i), int32(j)
}
func (h *deadlines) Push(x any) {
	c := x.(*Conn)
	c.heapIdx = int32(len(*h))
	*h = append(*h, c)
}
func (h *deadlines) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	c.heapIdx = -1
	*h = old[:len(old)-1]
	return c
}
