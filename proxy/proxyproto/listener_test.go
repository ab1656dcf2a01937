package proxyproto

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"
)

type refusal struct {
	remote net.Addr
	err    error
}

// listen serves a Listener on 127.0.0.1 allowing allow; refusals are
// reported on the channel.
func listen(t *testing.T, timeout time.Duration, allow ...string) (net.Listener, chan refusal) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan refusal, 16)
	cfg := Config{Timeout: timeout, Refused: func(a net.Addr, err error) { refused <- refusal{a, err} }}
	for _, a := range allow {
		cfg.Allow = append(cfg.Allow, netip.MustParsePrefix(a))
	}
	l := NewListener(ln, cfg)
	t.Cleanup(func() { l.Close() })
	return l, refused
}

// dialFrom connects to l from the loopback address from, writes what it
// is given (each string a write of its own) and returns the connection.
func dialFrom(t *testing.T, l net.Listener, from string, writes ...string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, w := range writes {
		if _, err := io.WriteString(c, w); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func accept(t *testing.T, l net.Listener) net.Conn {
	t.Helper()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	select {
	case c := <-got:
		t.Cleanup(func() { c.Close() })
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no connection accepted within 5 s")
		return nil
	}
}

func waitRefusal(t *testing.T, refused chan refusal) refusal {
	t.Helper()
	select {
	case r := <-refused:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no connection refused within 5 s")
		return refusal{}
	}
}

// closedByServer waits until the server end of c is closed.
func closedByServer(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 64)); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Fatalf("read %d bytes, %v; want the connection closed", n, err)
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

func TestConnTakesTheHeadersAddresses(t *testing.T) {
	l, _ := listen(t, 5*time.Second, "127.0.0.0/8")
	tests := []struct {
		name          string
		writes        []string
		remote, local string // "" = the socket's
	}{
		{"v1 in one write with the request", []string{"PROXY TCP4 192.0.2.7 198.51.100.1 40000 443\r\nGET / HTTP/1.1\r\n\r\n"},
			"192.0.2.7:40000", "198.51.100.1:443"},
		{"v1 split across writes", []string{"PROXY TCP6 2001:db8::7 ", "2001:db8::1 40000 80\r", "\nGET / HTTP/1.1\r\n\r\n"},
			"[2001:db8::7]:40000", "[2001:db8::1]:80"},
		{"v2", []string{string(v2(cmdProxy, 0x11, inet4Body("192.0.2.8", "198.51.100.1", 5, 443))) + "GET / HTTP/1.1\r\n\r\n"},
			"192.0.2.8:5", "198.51.100.1:443"},
		{"v2 LOCAL keeps the socket's", []string{string(v2(cmdLocal, 0x00, nil)) + "GET / HTTP/1.1\r\n\r\n"}, "", ""},
		{"v1 UNKNOWN keeps the socket's", []string{"PROXY UNKNOWN\r\nGET / HTTP/1.1\r\n\r\n"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := dialFrom(t, l, "127.0.0.1", tt.writes...)
			c := accept(t, l)
			remote, local := tt.remote, tt.local
			if remote == "" {
				remote, local = cc.LocalAddr().String(), cc.RemoteAddr().String()
			}
			if c.RemoteAddr().String() != remote || c.LocalAddr().String() != local {
				t.Errorf("addresses %s -> %s, want %s -> %s", c.RemoteAddr(), c.LocalAddr(), remote, local)
			}
			if Proxied(c) != (tt.remote != "") {
				t.Errorf("Proxied %v", Proxied(c))
			}
			want := "GET / HTTP/1.1\r\n\r\n"
			got := make([]byte, len(want))
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
				t.Errorf("after the header read %q, %v; want %q", got, err, want)
			}
		})
	}
}

func TestListenerRefusesWhatItMustNotTrust(t *testing.T) {
	tests := []struct {
		name   string
		from   string
		writes []string
		want   error
	}{
		{"a valid header from a network not allowed", "127.0.0.2",
			[]string{"PROXY TCP4 192.0.2.7 198.51.100.1 40000 443\r\nGET / HTTP/1.1\r\n\r\n"}, ErrNotAllowed},
		{"an allowed peer without a header", "127.0.0.1", []string{"GET / HTTP/1.1\r\nHost: x\r\n\r\n"}, ErrNoHeader},
		{"an allowed peer with a broken header", "127.0.0.1", []string{"PROXY TCP4 192.0.2.7 nowhere 1 2\r\n"}, ErrMalformed},
		{"an allowed peer leaving mid-header", "127.0.0.1", []string{"PROXY TCP4 192.0.2.7"}, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, refused := listen(t, 5*time.Second, "127.0.0.1/32")
			c := dialFrom(t, l, tt.from, tt.writes...)
			if tt.want == io.EOF {
				c.(*net.TCPConn).CloseWrite()
			}
			r := waitRefusal(t, refused)
			if !errors.Is(r.err, tt.want) {
				t.Errorf("refused with %v, want %v", r.err, tt.want)
			}
			if host, _, _ := net.SplitHostPort(r.remote.String()); host != tt.from {
				t.Errorf("refusal names %s, want the peer %s", r.remote, tt.from)
			}
			closedByServer(t, c)
		})
	}
}

func TestListenerGivesUpOnASilentPeer(t *testing.T) {
	l, refused := listen(t, 200*time.Millisecond, "127.0.0.1/32")
	c := dialFrom(t, l, "127.0.0.1")
	if r := waitRefusal(t, refused); !errors.Is(r.err, os.ErrDeadlineExceeded) {
		t.Errorf("refused with %v, want a deadline", r.err)
	}
	closedByServer(t, c)
}

// TestListenerCloseCutsShortPendingHeaders: Close does not wait for a
// silent peer's timeout.
func TestListenerCloseCutsShortPendingHeaders(t *testing.T) {
	l, refused := listen(t, time.Hour, "127.0.0.1/32")
	dialFrom(t, l, "127.0.0.1", "PROXY ")
	accepted := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		accepted <- err
	}()
	done := make(chan error, 1)
	go func() { done <- l.Close() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for the pending header")
	}
	if err := <-accepted; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
	select {
	case r := <-refused:
		if r.err == nil {
			t.Error("pending connection refused without a reason")
		}
	default: // closed before its reader was told: also fine
	}
}
