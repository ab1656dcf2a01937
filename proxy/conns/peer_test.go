package conns

import (
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestPeerAddrPortIsTheClientsAddressAfterAParkAndWake: the address a
// server takes per request (PeerAddrPort, read at accept) is the
// client's, as RemoteAddr gives it, and stays so once the connection was
// parked, detached from its net.Conn and woken on a new one.
func TestPeerAddrPortIsTheClientsAddressAfterAParkAndWake(t *testing.T) {
	l, client, c := longLingerListener(t)
	want := client.LocalAddr().(*net.TCPAddr).AddrPort()
	if got := c.PeerAddrPort(); got != want {
		t.Fatalf("PeerAddrPort %v, want the client's %v", got, want)
	}
	if got := c.RemoteAddr().(*net.TCPAddr).AddrPort(); got != want {
		t.Fatalf("RemoteAddr %v, want %v", got, want)
	}
	if _, err := client.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	answer(t, c)
	if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle Read after the first answer: %v, want io.EOF (park)", err)
	}
	wakeParked(t, l, client, c)
	if got := c.PeerAddrPort(); got != want {
		t.Fatalf("woken: PeerAddrPort %v, want %v", got, want)
	}
	wantParks(t, l, 1)
}

// TestPeerAddrPortOfAPipeIsZero: a connection that is not TCP names no
// address, as proxy's addrPort gives none for it.
func TestPeerAddrPortOfAPipeIsZero(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	defer server.Close()
	if got := peerOf(server); got != (netip.AddrPort{}) {
		t.Fatalf("peerOf(pipe) = %v, want none", got)
	}
}
