package main

import (
	"context"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
)

func TestSameAddrMatchesTheSocketAConfiguredAddressNames(t *testing.T) {
	tcp := func(s string) net.Addr {
		a, err := net.ResolveTCPAddr("tcp", s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	tests := []struct {
		name, bound, addr string
		want              bool
	}{
		{"same address", "127.0.0.1:8080", "127.0.0.1:8080", true},
		{"another port", "127.0.0.1:8080", "127.0.0.1:8081", false},
		{"another IP", "127.0.0.1:8080", "127.0.0.2:8080", false},
		{"wildcard by port alone", "[::]:80", ":80", true},
		{"wildcard spelled IPv4", "[::]:80", "0.0.0.0:80", true},
		{"wildcard against a specific IP", "[::]:80", "127.0.0.1:80", false},
		{"specific against a wildcard", "127.0.0.1:80", ":80", false},
		{"IPv6 loopback", "[::1]:443", "[::1]:443", true},
		{"port 0 picks anew", "127.0.0.1:0", "127.0.0.1:0", false},
		{"a name is not resolved", "127.0.0.1:80", "localhost:80", false},
		{"garbage", "127.0.0.1:80", "nonsense", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameAddr(tcp(tt.bound), tt.addr); got != tt.want {
				t.Errorf("sameAddr(%s, %q) = %v, want %v", tt.bound, tt.addr, got, tt.want)
			}
		})
	}
}

func TestTakeFindsASocketByNameThenByAddressAndNeverTwice(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	named, err := newTCPSocket("tcp:"+addr, ln)
	if err != nil {
		t.Fatal(err)
	}
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	anon, err := newTCPSocket("main", ln2) // systemd's FileDescriptorName
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &sockets{inherited: []*socket{named, anon, {name: "h3", udp: udp}}}
	t.Cleanup(func() { _ = s.closeInherited(); named.close(); anon.close() })

	if k := s.take("tcp", addr); k != named {
		t.Errorf("take(tcp, %s) = %v, want the socket passed under that name", addr, k)
	}
	if k := s.take("tcp", addr); k != nil {
		t.Errorf("a socket was taken twice")
	}
	if k := s.take("tcp", udp.LocalAddr().String()); k != nil {
		t.Errorf("a TCP listener took the UDP socket")
	}
	if k := s.take("udp", udp.LocalAddr().String()); k == nil || k.udp != udp || k.name != "udp:"+udp.LocalAddr().String() {
		t.Errorf("take(udp) = %+v, want the UDP socket, renamed for the next handover", k)
	}
	if k := s.take("tcp", ln2.Addr().String()); k != anon {
		t.Errorf("the socket systemd named %q was not found by its address", "main")
	}
	if len(s.inherited) != 0 {
		t.Errorf("%d sockets left inherited", len(s.inherited))
	}
}

// TestInheritedListenerServesAndIsHandedOnUnderItsName passes a listener
// as a new process gets it (a descriptor and the environment), and
// checks that the listener made of it accepts the connections queued on
// the socket and that the variables are gone for the children.
func TestInheritedListenerServesAndIsHandedOnUnderItsName(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	client, err := net.Dial("tcp", addr) // queued before the new process takes the socket
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	k, err := adopt(dupTo(t, f), "tcp:"+addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &sockets{inherited: []*socket{k}}
	got, err := s.listenTCP(context.Background(), addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	c, err := got.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got.Addr().String() != addr {
		t.Errorf("inherited listener on %s, want %s", got.Addr(), addr)
	}
	_, names, err := s.files()
	if err != nil || len(names) != 1 || names[0] != "tcp:"+addr {
		t.Errorf("handed on as %q (%v), want [tcp:%s]", names, err, addr)
	}
}

// dupTo duplicates f's descriptor as a new process would find it.
func dupTo(t *testing.T, f *os.File) int {
	t.Helper()
	defer f.Close()
	fd, err := fdOf(f)
	if err != nil {
		t.Fatal(err)
	}
	nfd, err := syscall.Dup(int(fd))
	if err != nil {
		t.Fatal(err)
	}
	return nfd
}

func TestHandedFDsReadsSystemdsOnlyForThisProcess(t *testing.T) {
	t.Setenv("LISTEN_FDS", "2")
	t.Setenv("LISTEN_FDNAMES", "web")
	t.Setenv("LISTEN_PID", strconv.Itoa(os.Getpid()+1))
	if names, fds, err := handedFDs(); err != nil || len(fds) != 0 || len(names) != 0 {
		t.Errorf("another process's LISTEN_FDS taken: %q %v %v", names, fds, err)
	}
	t.Setenv("LISTEN_PID", strconv.Itoa(os.Getpid()))
	names, fds, err := handedFDs()
	if err != nil || len(fds) != 2 || fds[0] != 3 || fds[1] != 4 || names[0] != "web" || names[1] != "" {
		t.Errorf("handedFDs() = %q %v %v, want [web \"\"] [3 4]", names, fds, err)
	}
	t.Setenv("LISTEN_FDS", "two")
	if _, _, err := handedFDs(); err == nil {
		t.Errorf("LISTEN_FDS=two: no error")
	}
	t.Setenv(envHandoverFDs, "tcp:127.0.0.1:80 udp:127.0.0.1:443")
	names, fds, err = handedFDs()
	if err != nil || len(fds) != 2 || names[1] != "udp:127.0.0.1:443" {
		t.Errorf("the upgrade's names: %q %v %v", names, fds, err)
	}
}
