package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/certs/certtest"
)

func testLog(t *testing.T) *slog.Logger {
	t.Helper()
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// fixture is a CA, three pairs on disk and a Store over them.
type fixture struct {
	ca                     *certtest.CA
	dir                    string
	def, exact, wild       certtest.Leaf
	defPair, exactP, wildP Pair
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{ca: certtest.NewCA(t, "ramjet test CA"), dir: t.TempDir()}
	f.def = f.ca.Issue(t, "", "default.test")
	f.exact = f.ca.Issue(t, "", "shop.example.com")
	f.wild = f.ca.Issue(t, "", "*.example.com")
	c, k := f.def.Write(t, f.dir, "default")
	f.defPair = Pair{CertFile: c, KeyFile: k}
	c, k = f.exact.Write(t, f.dir, "shop")
	f.exactP = Pair{Names: []string{"Shop.Example.com"}, CertFile: c, KeyFile: k}
	c, k = f.wild.Write(t, f.dir, "wild")
	f.wildP = Pair{Names: []string{"*.example.com"}, CertFile: c, KeyFile: k}
	return f
}

func (f *fixture) config() Config {
	return Config{Default: f.defPair, Hosts: []Pair{f.exactP, f.wildP}, DisableOCSP: true, Debounce: 20 * time.Millisecond}
}

func newStore(t *testing.T, cfg Config) *Store {
	t.Helper()
	s, err := New(cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() }) // Close never fails
	return s
}

// serveTLS accepts handshakes on 127.0.0.1 until the test ends.
func serveTLS(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { _ = ln.Close(); <-done }) // closing ends Accept
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if err := c.(*tls.Conn).Handshake(); err == nil {
					_, _ = io.Copy(io.Discard, c) // until the client closes
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// handshake dials addr with SNI name, verifying against pool, and
// returns the connection state.
func handshake(t *testing.T, addr, name string, pool *x509.CertPool, cfg *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg.ServerName = name
	cfg.RootCAs = pool
	if name == "" {
		cfg.InsecureSkipVerify = true // no name to verify against
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	return c.ConnectionState(), nil
}

func TestSNIPicksCertificate(t *testing.T) {
	f := newFixture(t)
	s := newStore(t, f.config())
	addr := serveTLS(t, s.TLSConfig())
	tests := []struct {
		name, sni string
		want      certtest.Leaf
		covered   bool // the chosen certificate verifies for sni
	}{
		{"exact name", "shop.example.com", f.exact, true},
		{"exact name in another case", "SHOP.example.COM", f.exact, true},
		{"wildcard", "blog.example.com", f.wild, true},
		{"wildcard does not match two labels", "a.blog.example.com", f.def, false},
		{"wildcard does not match the apex", "example.com", f.def, false},
		{"unknown name gets the default", "other.test", f.def, false},
		{"no server name gets the default", "", f.def, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The default does not cover the other names: compare it
			// below instead of verifying it.
			cfg := &tls.Config{InsecureSkipVerify: !tt.covered}
			st, err := handshake(t, addr, tt.sni, f.ca.Pool(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.PeerCertificates[0]; !got.Equal(tt.want.Cert) {
				t.Errorf("got certificate for %v, want %v", got.Subject.CommonName, tt.want.Cert.Subject.CommonName)
			}
		})
	}
}

func TestNoDefaultFailsUnknownName(t *testing.T) {
	f := newFixture(t)
	cfg := f.config()
	cfg.Default = Pair{}
	s := newStore(t, cfg)
	if _, err := s.GetCertificate(&tls.ClientHelloInfo{ServerName: "other.test"}); !errors.Is(err, ErrNoCertificate) {
		t.Fatalf("err = %v, want ErrNoCertificate", err)
	}
	if c, err := s.GetCertificate(&tls.ClientHelloInfo{ServerName: "shop.example.com."}); err != nil || !c.Leaf.Equal(f.exact.Cert) {
		t.Fatalf("trailing dot: %v, %v", c, err)
	}
}

func TestTLSConfigIsModern(t *testing.T) {
	f := newFixture(t)
	s := newStore(t, f.config())
	addr := serveTLS(t, s.TLSConfig())
	if _, err := handshake(t, addr, "shop.example.com", f.ca.Pool(), &tls.Config{MaxVersion: tls.VersionTLS11}); err == nil {
		t.Error("TLS 1.1 handshake succeeded")
	}
	st, err := handshake(t, addr, "shop.example.com", f.ca.Pool(), &tls.Config{
		MaxVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != tls.VersionTLS12 || st.NegotiatedProtocol != "h2" {
		t.Errorf("version %x, ALPN %q; want TLS 1.2 and h2", st.Version, st.NegotiatedProtocol)
	}
	st, err = handshake(t, addr, "shop.example.com", f.ca.Pool(), &tls.Config{NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != tls.VersionTLS13 || st.NegotiatedProtocol != "http/1.1" {
		t.Errorf("version %x, ALPN %q; want TLS 1.3 and http/1.1", st.Version, st.NegotiatedProtocol)
	}
}

func TestSessionResumption(t *testing.T) {
	f := newFixture(t)
	s := newStore(t, f.config())
	addr := serveTLS(t, s.TLSConfig())
	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cache := tls.NewLRUClientSessionCache(4)
		var resumed bool
		// TLS 1.3 tickets arrive after the handshake, with the first
		// read; a few attempts let one land in the cache.
		for i := 0; i < 5 && !resumed; i++ {
			cfg := &tls.Config{ClientSessionCache: cache, MaxVersion: version, ServerName: "shop.example.com", RootCAs: f.ca.Pool()}
			c, err := tls.Dial("tcp", addr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			resumed = c.ConnectionState().DidResume
			_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			_, _ = c.Read(make([]byte, 1)) // processes the ticket; times out
			c.Close()
		}
		if !resumed {
			t.Errorf("TLS %x: no session was resumed", version)
		}
	}
}

func TestInvalidNewFilesKeepOldCertificate(t *testing.T) {
	f := newFixture(t)
	s := newStore(t, f.config())
	if err := os.WriteFile(f.exactP.CertFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := s.Reload()
	if err == nil || !strings.Contains(err.Error(), "keeping the old certificate") {
		t.Fatalf("Reload() = %v, want an error keeping the old certificate", err)
	}
	c, err := s.GetCertificate(&tls.ClientHelloInfo{ServerName: "shop.example.com"})
	if err != nil || !c.Leaf.Equal(f.exact.Cert) {
		t.Fatalf("after a bad reload got %v, %v; want the old certificate", c, err)
	}
	// A mismatched key is as bad as a broken file.
	other := f.ca.Issue(t, "", "shop.example.com")
	if err := os.WriteFile(f.exactP.CertFile, other.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err == nil {
		t.Fatal("Reload with a mismatched key succeeded")
	}
	other.Write(t, f.dir, "shop")
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.GetCertificate(&tls.ClientHelloInfo{ServerName: "shop.example.com"}); !c.Leaf.Equal(other.Cert) {
		t.Fatal("valid new files were not picked up")
	}
}

func TestUnchangedFilesKeepEntry(t *testing.T) {
	f := newFixture(t)
	s := newStore(t, f.config())
	before := s.cur.Load().hosts[0]
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if after := s.cur.Load().hosts[0]; after != before {
		t.Fatal("reload of identical files replaced the entry (and would drop its staple)")
	}
}

func TestRotationPickedUpLive(t *testing.T) {
	f := newFixture(t)
	s := newStore(t, f.config())
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := serveTLS(t, s.TLSConfig())
	next := f.ca.Issue(t, "", "shop.example.com")
	next.Write(t, f.dir, "shop")
	testbed.WaitFor(t, 5*time.Second, "the renamed certificate served", func() bool {
		st, err := handshake(t, addr, "shop.example.com", f.ca.Pool(), nil)
		return err == nil && st.PeerCertificates[0].Equal(next.Cert)
	})
	// In place, not by rename: the key first, then the cert.
	third := f.ca.Issue(t, "", "shop.example.com")
	if err := os.WriteFile(f.exactP.KeyFile, third.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.exactP.CertFile, third.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	testbed.WaitFor(t, 5*time.Second, "the certificate rewritten in place served", func() bool {
		st, err := handshake(t, addr, "shop.example.com", f.ca.Pool(), nil)
		return err == nil && st.PeerCertificates[0].Equal(third.Cert)
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

// serving is the leaf the store hands a handshake for name.
func serving(t *testing.T, s *Store, name string) *x509.Certificate {
	t.Helper()
	c, err := s.GetCertificate(&tls.ClientHelloInfo{ServerName: name})
	if err != nil {
		t.Fatal(err)
	}
	return c.Leaf
}

// One pair that does not load fails Stage, and the pairs that did load
// are not served either: nothing changes.
func TestStageWithBadPairFailsAndServesNothingNew(t *testing.T) {
	f := newFixture(t)
	s := newStore(t, f.config())
	f.ca.Issue(t, "", "shop.example.com").Write(t, f.dir, "shop") // good new files
	if err := os.WriteFile(f.wildP.CertFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stage()
	if err == nil || !strings.Contains(err.Error(), "host certificate 1") || strings.Contains(err.Error(), "keeping") {
		t.Fatalf("Stage() = %v, %v; want the error of host certificate 1", st, err)
	}
	if !serving(t, s, "shop.example.com").Equal(f.exact.Cert) || !serving(t, s, "a.example.com").Equal(f.wild.Cert) {
		t.Fatal("a failed Stage changed the served certificates")
	}
}

// A staged table serves only after Commit; unchanged pairs keep their
// entries (and so their staples).
func TestCommitServesStagedTable(t *testing.T) {
	f := newFixture(t)
	s := newStore(t, f.config())
	def := s.cur.Load().def
	next := f.ca.Issue(t, "", "shop.example.com")
	next.Write(t, f.dir, "shop")
	st, err := s.Stage()
	if err != nil {
		t.Fatal(err)
	}
	if !serving(t, s, "shop.example.com").Equal(f.exact.Cert) {
		t.Fatal("Stage served the new certificate before Commit")
	}
	st.Commit()
	if !serving(t, s, "shop.example.com").Equal(next.Cert) {
		t.Fatal("Commit did not serve the staged certificate")
	}
	if s.cur.Load().def != def {
		t.Error("Commit replaced the entry of an unchanged pair")
	}
}

// A reload on file change between Stage and Commit read the files later:
// Commit keeps its table instead of going back to the staged one.
func TestCommitKeepsTableOfLaterFileReload(t *testing.T) {
	f := newFixture(t)
	s := newStore(t, f.config())
	f.ca.Issue(t, "", "shop.example.com").Write(t, f.dir, "shop")
	st, err := s.Stage()
	if err != nil {
		t.Fatal(err)
	}
	latest := f.ca.Issue(t, "", "shop.example.com")
	latest.Write(t, f.dir, "shop")
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	st.Commit()
	if !serving(t, s, "shop.example.com").Equal(latest.Cert) {
		t.Fatal("Commit went back to the files as they were at Stage")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"empty", Config{}, []string{"neither a default"}},
		{"default without key", Config{Default: Pair{CertFile: "a"}}, []string{"default: no key file"}},
		{"host without names", Config{Hosts: []Pair{{CertFile: "a", KeyFile: "b"}}}, []string{"no names"}},
		{"bad wildcard", Config{Hosts: []Pair{{Names: []string{"a.*.com"}, CertFile: "a", KeyFile: "b"}}}, []string{"bad host name"}},
		{"duplicate name", Config{Hosts: []Pair{
			{Names: []string{"a.com"}, CertFile: "a", KeyFile: "b"},
			{Names: []string{"A.com."}, CertFile: "c", KeyFile: "d"},
		}}, []string{"already served by host certificate 0"}},
		{"all problems at once", Config{Hosts: []Pair{{Names: []string{"*"}}}}, []string{"no cert file", "no key file", "bad host name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if err == nil {
				t.Fatal("Validate() = nil")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want it to mention %q", err, w)
				}
			}
		})
	}
	good := Config{Hosts: []Pair{{Names: []string{"*.a.com", "a.com"}, CertFile: "a", KeyFile: "b"}}}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate(good) = %v", err)
	}
}

func TestNewFailsOnMissingFiles(t *testing.T) {
	dir := t.TempDir()
	_, err := New(Config{Default: Pair{CertFile: filepath.Join(dir, "x.crt"), KeyFile: filepath.Join(dir, "x.key")}}, testLog(t))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("New = %v, want a not-exist error", err)
	}
}
