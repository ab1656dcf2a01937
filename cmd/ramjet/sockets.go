package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy"
)

// The environment that hands listening sockets to a new process. A
// ramjet upgrading itself (SIGUSR2) names each socket it passes, in fd
// order from 3, as "tcp:ADDR" or "udp:ADDR" with the address its config
// gave, and the fd of the pipe on which the new process says it serves.
// systemd's socket activation (LISTEN_FDS, LISTEN_PID, LISTEN_FDNAMES)
// is read too; its sockets are taken by the address they are bound to.
const (
	envHandoverFDs   = "RAMJET_HANDOVER_FDS"
	envHandoverReady = "RAMJET_HANDOVER_READY"
	// envHandoverJournal names the old process's journal of the purges
	// it applies while it drains (diskhandover.go).
	envHandoverJournal = "RAMJET_HANDOVER_JOURNAL"
	firstFD            = 3 // SD_LISTEN_FDS_START; os/exec's ExtraFiles start there too
)

// socket is one listening socket: a TCP listener or the HTTP/3 UDP one.
type socket struct {
	name string // "tcp:ADDR" or "udp:ADDR", ADDR as configured
	ln   *tcpListener
	udp  *net.UDPConn
}

// tcpListener closes once: the handover closes it to stop accepting,
// and the server's shutdown closes it again, which must not fail then.
type tcpListener struct {
	*net.TCPListener
	once sync.Once
	err  error
}

func (l *tcpListener) Close() error {
	l.once.Do(func() { l.err = l.TCPListener.Close() })
	return l.err
}

// bound is the address the socket is bound to.
func (s *socket) bound() net.Addr {
	if s.ln != nil {
		return s.ln.Addr()
	}
	return s.udp.LocalAddr()
}

// file is a duplicate of the socket's descriptor, to pass on.
func (s *socket) file() (*os.File, error) {
	if s.ln != nil {
		return s.ln.File()
	}
	return s.udp.File()
}

// close closes this process's descriptor of the socket.
func (s *socket) close() error {
	if s.ln != nil {
		return s.ln.Close()
	}
	return s.udp.Close()
}

func newTCPSocket(name string, ln net.Listener) (*socket, error) {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		_ = ln.Close() // the error below says why
		return nil, fmt.Errorf("%s: a %T, not a TCP listener", name, ln)
	}
	return &socket{name: name, ln: &tcpListener{TCPListener: tl}}, nil
}

// sockets are the listening sockets of this process: those it was
// handed (inherited until a listener takes them) and those it serves on
// (open), which an upgrade hands on.
type sockets struct {
	inherited []*socket
	open      []*socket
	ready     *os.File // the handover's pipe to the old process; nil when started afresh
	journal   string   // the old process's handover journal; "" when it named none
}

// inheritSockets takes the sockets the environment names, and removes
// those variables so that no child (the next upgrade, php-cgi) sees
// them. A socket that cannot be read as one is an error: the process
// would otherwise serve without it.
func inheritSockets() (*sockets, error) {
	s := &sockets{}
	names, fds, err := handedFDs()
	ready, rerr := readyPipe()
	s.ready, err = ready, errors.Join(err, rerr)
	s.journal = os.Getenv(envHandoverJournal)
	for _, v := range []string{envHandoverFDs, envHandoverReady, envHandoverJournal, "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"} {
		_ = os.Unsetenv(v) // cannot fail for these names
	}
	if err != nil {
		if ready != nil {
			_ = ready.Close() // the old process reads EOF: this one did not start
		}
		return nil, err
	}
	for i, fd := range fds {
		sock, err := adopt(fd, names[i])
		if err != nil {
			return nil, errors.Join(err, s.closeInherited())
		}
		s.inherited = append(s.inherited, sock)
	}
	return s, nil
}

// handedFDs reads which descriptors were handed over, and their names:
// the upgrade's, else systemd's (only when LISTEN_PID is this process).
func handedFDs() (names []string, fds []int, err error) {
	if v, ok := os.LookupEnv(envHandoverFDs); ok {
		names = strings.Fields(v)
	} else if pid, _ := strconv.Atoi(os.Getenv("LISTEN_PID")); pid == os.Getpid() {
		n, err := strconv.Atoi(os.Getenv("LISTEN_FDS"))
		if err != nil || n < 0 {
			return nil, nil, fmt.Errorf("LISTEN_FDS=%q: not a count of sockets", os.Getenv("LISTEN_FDS"))
		}
		names = make([]string, n)
		copy(names, strings.Split(os.Getenv("LISTEN_FDNAMES"), ":"))
	}
	for i := range names {
		fds = append(fds, firstFD+i)
	}
	return names, fds, nil
}

// readyPipe is the pipe to the old process of an upgrade, or nil.
func readyPipe() (*os.File, error) {
	v, ok := os.LookupEnv(envHandoverReady)
	if !ok {
		return nil, nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < firstFD {
		return nil, fmt.Errorf("%s=%q: not a descriptor", envHandoverReady, v)
	}
	syscall.CloseOnExec(fd) // php-cgi, started before it is closed, must not hold it
	return os.NewFile(uintptr(fd), "handover"), nil
}

// adopt makes a listener (TCP) or a UDP socket of descriptor fd; the
// descriptor itself is closed (the socket lives on in a duplicate that
// no child inherits).
func adopt(fd int, name string) (*socket, error) {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close() // the listener holds its own duplicate
	if ln, err := net.FileListener(f); err == nil {
		return newTCPSocket(name, ln)
	}
	pc, err := net.FilePacketConn(f)
	if err != nil {
		return nil, fmt.Errorf("inherited descriptor %d (%q): neither a TCP listener nor a UDP socket: %w", fd, name, err)
	}
	udp, ok := pc.(*net.UDPConn)
	if !ok {
		_ = pc.Close() // the error below says why
		return nil, fmt.Errorf("inherited descriptor %d (%q): a %T, not a UDP socket", fd, name, pc)
	}
	return &socket{name: name, udp: udp}, nil
}

// take removes and returns the inherited socket for network and addr:
// the one passed under that name, else one bound to that address (a
// systemd socket, or the same address spelled otherwise).
func (s *sockets) take(network, addr string) *socket {
	name := network + ":" + addr
	for _, match := range []func(*socket) bool{
		func(k *socket) bool { return k.name == name },
		// a systemd socket bound to exactly that address: 0.0.0.0:80 and
		// [::]:80 of a listen list are two
		func(k *socket) bool { return (k.udp != nil) == (network == "udp") && k.bound().String() == addr },
		func(k *socket) bool { return (k.udp != nil) == (network == "udp") && sameAddr(k.bound(), addr) },
	} {
		for i, k := range s.inherited {
			if match(k) {
				s.inherited = append(s.inherited[:i], s.inherited[i+1:]...)
				k.name = name
				return k
			}
		}
	}
	return nil
}

// sameAddr reports whether a socket bound to bound serves the configured
// address addr: the same port, and the same IP or both a wildcard (Go
// listens on ":80" and "0.0.0.0:80" alike, dual-stack). Port 0 matches
// nothing: each listen picks a port anew.
func sameAddr(bound net.Addr, addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "0" {
		return false
	}
	bhost, bport, err := net.SplitHostPort(bound.String())
	if err != nil || bport != port {
		return false
	}
	ip, bip := net.ParseIP(host), net.ParseIP(bhost)
	if host == "" || ip != nil && ip.IsUnspecified() {
		return bip != nil && bip.IsUnspecified()
	}
	return ip != nil && ip.Equal(bip)
}

// listenTCP is the listener for addr: the inherited one, or one opened
// (see proxy.ListenTCP).
func (s *sockets) listenTCP(ctx context.Context, addr string, idle time.Duration) (net.Listener, error) {
	return s.listenOr(addr, func() (net.Listener, error) { return proxy.ListenTCP(ctx, addr, idle) })
}

// listenOr is the inherited listener for addr, or the one bind opens.
func (s *sockets) listenOr(addr string, bind func() (net.Listener, error)) (net.Listener, error) {
	k := s.take("tcp", addr)
	if k == nil {
		ln, err := bind()
		if err != nil {
			return nil, err
		}
		if k, err = newTCPSocket("tcp:"+addr, ln); err != nil {
			return nil, err
		}
	}
	s.open = append(s.open, k)
	return k.ln, nil
}

// listenUDP is the HTTP/3 socket for addr: the inherited one, or one
// opened.
func (s *sockets) listenUDP(addr string) (*net.UDPConn, error) {
	k := s.take("udp", addr)
	if k == nil {
		ua, err := net.ResolveUDPAddr("udp", addr)
		if err != nil {
			return nil, err
		}
		udp, err := net.ListenUDP("udp", ua)
		if err != nil {
			return nil, err
		}
		k = &socket{name: "udp:" + addr, udp: udp}
	}
	s.open = append(s.open, k)
	return k.udp, nil
}

// closeInherited closes the inherited sockets no listener took: those
// of addresses the config no longer names.
func (s *sockets) closeInherited() error {
	var errs []error
	for _, k := range s.inherited {
		errs = append(errs, k.close())
	}
	s.inherited = nil
	return errors.Join(errs...)
}

// files duplicates the open sockets' descriptors for a new process, with
// the names that say which is which.
func (s *sockets) files() ([]*os.File, []string, error) {
	var files []*os.File
	var names []string
	for _, k := range s.open {
		f, err := k.file()
		if err != nil {
			return nil, nil, errors.Join(err, closeFiles(files))
		}
		files, names = append(files, f), append(names, k.name)
	}
	return files, names, nil
}

// stopAccepting closes this process's descriptors of its TCP listeners:
// the sockets live on in the new process, which takes every connection
// from then on, those already queued included. The UDP socket stays: it
// carries the packets of the HTTP/3 connections still being served.
func (s *sockets) stopAccepting() error {
	var errs []error
	for _, k := range s.open {
		if k.ln != nil {
			if err := k.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func closeFiles(files []*os.File) error {
	var errs []error
	for _, f := range files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
