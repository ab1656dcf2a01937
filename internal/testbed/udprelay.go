package testbed

import (
	"net"
	"sync"
	"testing"
	"time"
)

// UDPRelay forwards datagrams between clients and target on 127.0.0.1,
// holding every datagram back to a client for delay: a network with a
// slow return path. A QUIC handshake through it cannot complete sooner
// than delay after the client's first flight, so that what the client
// sends at once (0-RTT data) reaches the server before the handshake
// can have completed, however fast the machine. One client at a time;
// closed at cleanup.
type UDPRelay struct {
	Addr string // where clients send

	ln    *net.UDPConn
	up    *net.UDPConn // to target
	delay time.Duration

	mu     sync.Mutex // guards client
	client *net.UDPAddr
	wg     sync.WaitGroup
}

// StartUDPRelay relays to target (host:port) with a delayed return path.
func StartUDPRelay(t testing.TB, target string, delay time.Duration) *UDPRelay {
	t.Helper()
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	raddr, err := net.ResolveUDPAddr("udp", target)
	if err != nil {
		t.Fatal(err)
	}
	up, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		t.Fatal(err)
	}
	r := &UDPRelay{Addr: ln.LocalAddr().String(), ln: ln, up: up, delay: delay}
	r.wg.Add(2)
	go r.forward()
	go r.back()
	t.Cleanup(func() {
		_ = ln.Close() // ends forward
		_ = up.Close() // ends back
		r.wg.Wait()
	})
	return r
}

func (r *UDPRelay) forward() {
	defer r.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, from, err := r.ln.ReadFromUDP(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.client = from
		r.mu.Unlock()
		_, _ = r.up.Write(buf[:n]) // UDP: a lost datagram is the protocol's to recover
	}
}

func (r *UDPRelay) back() {
	defer r.wg.Done()
	for {
		buf := make([]byte, 64<<10)
		n, err := r.up.Read(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		to := r.client
		r.mu.Unlock()
		time.AfterFunc(r.delay, func() { _, _ = r.ln.WriteToUDP(buf[:n], to) }) // a write after Close fails harmlessly
	}
}
