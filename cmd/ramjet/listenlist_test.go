package main

import (
	"fmt"
	"net"
	"testing"
)

// TestTakeGivesEachAddressOfAListItsOwnFamilysSocket: systemd's sockets
// for listen: ["0.0.0.0:P", "[::]:P"] are both wildcards of port P, in
// whatever order; each address takes the socket bound to it.
func TestTakeGivesEachAddressOfAListItsOwnFamilysSocket(t *testing.T) {
	v4, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := v4.Addr().(*net.TCPAddr).Port
	v6, err := net.Listen("tcp6", fmt.Sprintf("[::]:%d", port))
	if err != nil {
		_ = v4.Close()
		t.Skipf("no IPv6: %v", err)
	}
	k6, err := newTCPSocket("ramjet.socket", v6)
	if err != nil {
		t.Fatal(err)
	}
	k4, err := newTCPSocket("ramjet.socket", v4)
	if err != nil {
		t.Fatal(err)
	}
	s := &sockets{inherited: []*socket{k6, k4}}
	t.Cleanup(func() { _ = k4.close(); _ = k6.close() })
	if k := s.take("tcp", fmt.Sprintf("0.0.0.0:%d", port)); k != k4 {
		t.Errorf("0.0.0.0:%d took %v, want the IPv4 socket", port, k.bound())
	}
	if k := s.take("tcp", fmt.Sprintf("[::]:%d", port)); k != k6 {
		t.Errorf("[::]:%d took %v, want the IPv6 socket", port, k)
	}
}
