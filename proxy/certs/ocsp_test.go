package certs

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/certs/certtest"
	"golang.org/x/crypto/ocsp"
)

// ocspStore serves one leaf whose OCSP server is url.
func ocspStore(t *testing.T, ca *certtest.CA, url string, timeout time.Duration) (*Store, certtest.Leaf) {
	t.Helper()
	leaf := ca.Issue(t, url, "shop.example.com")
	c, k := leaf.Write(t, t.TempDir(), "shop")
	s := newStore(t, Config{Default: Pair{CertFile: c, KeyFile: k}, OCSPTimeout: timeout})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, leaf
}

func TestOCSPStapled(t *testing.T) {
	ca := certtest.NewCA(t, "ramjet test CA")
	resp := &certtest.OCSPResponder{CA: ca, Status: ocsp.Good, Validity: time.Hour}
	responder := httptest.NewServer(resp)
	defer responder.Close()
	s, leaf := ocspStore(t, ca, responder.URL, time.Second)
	addr := serveTLS(t, s.TLSConfig())
	var staple []byte
	testbed.WaitFor(t, 5*time.Second, "a stapled OCSP response", func() bool {
		st, err := handshake(t, addr, "shop.example.com", ca.Pool(), nil)
		staple = st.OCSPResponse
		return err == nil && len(staple) > 0
	})
	got, err := ocsp.ParseResponseForCert(staple, leaf.Cert, ca.Cert)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ocsp.Good {
		t.Errorf("stapled status %d, want good", got.Status)
	}
	if n := resp.Requests.Load(); n != 1 {
		t.Errorf("responder asked %d times, want 1 (next refresh is half an hour away)", n)
	}
}

func TestOCSPRevokedIsNotStapled(t *testing.T) {
	ca := certtest.NewCA(t, "ramjet test CA")
	resp := &certtest.OCSPResponder{CA: ca, Status: ocsp.Revoked, Validity: time.Hour}
	responder := httptest.NewServer(resp)
	defer responder.Close()
	s, _ := ocspStore(t, ca, responder.URL, time.Second)
	testbed.WaitFor(t, 5*time.Second, "the responder asked", func() bool { return resp.Requests.Load() > 0 })
	if err := s.Close(); err != nil { // the fetch has finished when Close returns
		t.Fatal(err)
	}
	if c, _ := s.GetCertificate(&tls.ClientHelloInfo{}); len(c.OCSPStaple) != 0 {
		t.Fatal("a revoked response was stapled")
	}
}

// A responder that accepts and never answers must cost neither the
// handshake nor Close more than the fetch timeout.
func TestOCSPUnreachableDoesNotBlock(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for i := 0; i < 4; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // never answered
		}
	}()
	defer func() {
		ln.Close()
		<-accepted
		for _, c := range held {
			c.Close()
		}
	}()
	ca := certtest.NewCA(t, "ramjet test CA")
	s, _ := ocspStore(t, ca, "http://"+ln.Addr().String()+"/", 300*time.Millisecond)
	addr := serveTLS(t, s.TLSConfig())
	start := time.Now()
	st, err := handshake(t, addr, "shop.example.com", ca.Pool(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("handshake took %v while the responder hangs", d)
	}
	if len(st.OCSPResponse) != 0 {
		t.Error("stapled something from a silent responder")
	}
	start = time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
}

func TestOCSPRefusedResponderIsTolerated(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	ca := certtest.NewCA(t, "ramjet test CA")
	s, _ := ocspStore(t, ca, url, time.Second)
	addr := serveTLS(t, s.TLSConfig())
	if _, err := handshake(t, addr, "shop.example.com", ca.Pool(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestNextRefresh(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name             string
		this, next, want time.Time
	}{
		{"halfway through validity", now, now.Add(4 * 24 * time.Hour), now.Add(2 * 24 * time.Hour)},
		{"this update in the past", now.Add(-time.Hour), now.Add(3 * time.Hour), now.Add(time.Hour)},
		{"no next update", now, time.Time{}, now.Add(noNextUpdate)},
		{"short validity floors at a minute", now, now.Add(30 * time.Second * 3), now.Add(minRefresh)},
		{"floor never passes next update", now, now.Add(10 * time.Second), now.Add(10 * time.Second)},
		{"this update in the future is now", now.Add(time.Hour), now.Add(4 * time.Hour), now.Add(2 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextRefresh(now, tt.this, tt.next); !got.Equal(tt.want) {
				t.Errorf("nextRefresh = %v, want %v", got, tt.want)
			}
		})
	}
}
