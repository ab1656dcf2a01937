package certs

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNoCertificate is returned to a handshake whose server name matches
// no host pair when there is no default pair.
var ErrNoCertificate = errors.New("certs: no certificate for server name")

// Pair names a certificate and its key on disk.
type Pair struct {
	// Names are the host names this pair serves: exact ("example.com")
	// or one leading wildcard label ("*.example.com", which matches
	// "a.example.com" but neither "example.com" nor "a.b.example.com").
	// Ignored for Config.Default.
	Names []string
	// CertFile is PEM: the leaf first, then its intermediates. OCSP
	// stapling needs the issuer, so the chain must include it.
	CertFile string
	KeyFile  string
}

// Config lists the certificates of one Store.
type Config struct {
	// Default is served when the client sends no server name or one no
	// host pair matches. Zero means none: such handshakes fail.
	Default Pair
	// Hosts are chosen by SNI. An exact name wins over a wildcard.
	Hosts []Pair
	// DisableOCSP turns stapling off. By default a leaf that names an
	// OCSP server gets its response fetched and stapled.
	DisableOCSP bool
	// OCSPTimeout bounds one OCSP fetch. Zero means 10 s.
	OCSPTimeout time.Duration
	// Debounce merges file events that arrive within it into one
	// reload (a cert and its key are usually written one after the
	// other). Zero means 200 ms.
	Debounce time.Duration
}

func (c *Config) hasDefault() bool { return c.Default.CertFile != "" || c.Default.KeyFile != "" }

// Validate reports every problem in c at once.
func (c *Config) Validate() error {
	var errs []error
	if !c.hasDefault() && len(c.Hosts) == 0 {
		errs = append(errs, errors.New("certs: neither a default certificate nor host certificates"))
	}
	if c.hasDefault() {
		errs = append(errs, c.Default.validateFiles("default")...)
	}
	seen := make(map[string]int)
	for i, p := range c.Hosts {
		what := fmt.Sprintf("host certificate %d", i)
		errs = append(errs, p.validateFiles(what)...)
		if len(p.Names) == 0 {
			errs = append(errs, fmt.Errorf("certs: %s: no names", what))
		}
		for _, n := range p.Names {
			key := normalizeName(n)
			if err := validName(key); err != nil {
				errs = append(errs, fmt.Errorf("certs: %s: %w", what, err))
				continue
			}
			if j, dup := seen[key]; dup && j != i {
				errs = append(errs, fmt.Errorf("certs: %s: name %q already served by host certificate %d", what, n, j))
			}
			seen[key] = i
		}
	}
	if c.OCSPTimeout < 0 || c.Debounce < 0 {
		errs = append(errs, errors.New("certs: negative OCSP timeout or debounce"))
	}
	return errors.Join(errs...)
}

func (p Pair) validateFiles(what string) []error {
	var errs []error
	if p.CertFile == "" {
		errs = append(errs, fmt.Errorf("certs: %s: no cert file", what))
	}
	if p.KeyFile == "" {
		errs = append(errs, fmt.Errorf("certs: %s: no key file", what))
	}
	return errs
}

func validName(n string) error {
	rest := strings.TrimPrefix(n, "*.")
	if rest == "" || strings.Contains(rest, "*") || strings.Contains(rest, "..") ||
		strings.HasPrefix(rest, ".") || strings.ContainsAny(rest, " /:") {
		return fmt.Errorf("bad host name %q", n)
	}
	return nil
}

// normalizeName lowercases and drops a trailing dot; it does not allocate
// for a name that is already lowercase without one.
func normalizeName(n string) string {
	return strings.ToLower(strings.TrimSuffix(n, "."))
}

// entry is one loaded pair. Everything but stapled is immutable: a
// reload that reads different bytes makes a new entry.
type entry struct {
	pair   Pair
	cert   *tls.Certificate // as loaded, without a staple
	leaf   *x509.Certificate
	issuer *x509.Certificate // nil when the chain does not include it
	// stapled is cert with OCSPStaple set, or nil. Written by the OCSP
	// loop, read by handshakes.
	stapled atomic.Pointer[tls.Certificate]
}

func (e *entry) current() *tls.Certificate {
	if c := e.stapled.Load(); c != nil {
		return c
	}
	return e.cert
}

func (e *entry) wantsOCSP() bool { return e.issuer != nil && len(e.leaf.OCSPServer) > 0 }

// table maps server names to entries. It is immutable once built.
type table struct {
	def   *entry            // nil when there is no default
	exact map[string]*entry // "example.com"
	wild  map[string]*entry // "example.com" for "*.example.com"
	hosts []*entry          // one per Config.Hosts, same order
}

func (t *table) lookup(serverName string) *entry {
	name := normalizeName(serverName)
	if e, ok := t.exact[name]; ok {
		return e
	}
	if i := strings.IndexByte(name, '.'); i > 0 {
		if e, ok := t.wild[name[i+1:]]; ok {
			return e
		}
	}
	return t.def
}

// each calls f for every entry, the default first.
func (t *table) each(f func(*entry)) {
	if t.def != nil {
		f(t.def)
	}
	for _, e := range t.hosts {
		f(e)
	}
}

// Store serves certificates to TLS handshakes and keeps them current.
// GetCertificate is safe for concurrent use; the watcher and the OCSP
// loop run between Start and Close.
type Store struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client // OCSP fetches
	cur    atomic.Pointer[table]
	wake   chan struct{} // a new table was swapped in: re-plan OCSP

	reloadMu sync.Mutex // serialises reloads

	runMu  sync.Mutex // guards cancel and done
	cancel func()
	done   chan struct{} // closed when the goroutines of Start have returned
}

// New loads every pair in cfg. Any pair that fails to load is an error:
// at start there is no old certificate to fall back to.
func New(cfg Config, log *slog.Logger) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.OCSPTimeout == 0 {
		cfg.OCSPTimeout = 10 * time.Second
	}
	if cfg.Debounce == 0 {
		cfg.Debounce = 200 * time.Millisecond
	}
	s := &Store{
		cfg:    cfg,
		log:    log,
		client: &http.Client{Timeout: cfg.OCSPTimeout},
		wake:   make(chan struct{}, 1),
	}
	t, errs := s.build(nil, false)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.cur.Store(t)
	return s, nil
}

// GetCertificate picks the certificate for a handshake by SNI: exact
// name, then wildcard, then the default. It never blocks.
func (s *Store) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if e := s.cur.Load().lookup(hello.ServerName); e != nil {
		return e.current(), nil
	}
	return nil, fmt.Errorf("%w %q", ErrNoCertificate, hello.ServerName)
}

// TLSConfig is a server config using the store: TLS 1.2 and 1.3, AEAD
// ECDHE suites only, session tickets on (Go rotates the ticket keys), and
// ALPN h2 then http/1.1. Each call returns a new config.
func (s *Store) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		CipherSuites:   modernSuites,
		NextProtos:     []string{"h2", "http/1.1"},
		GetCertificate: s.GetCertificate,
	}
}

// modernSuites are the TLS 1.2 suites offered (TLS 1.3 suites are not
// configurable): forward-secret AEADs, ECDSA and RSA.
var modernSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// Reload reads every pair from disk again. A pair whose bytes did not
// change keeps its entry (and staple); a pair that fails to load keeps
// its old certificate, and the error is returned after the swap.
func (s *Store) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	old := s.cur.Load()
	t, errs := s.build(old, true)
	s.swap(old, t)
	return errors.Join(errs...)
}

// Staged is the store's pairs read from disk again into a table that
// serves nothing until Commit: a config reload loads its certificates
// first and swaps them in only once the rest of the config has applied.
type Staged struct {
	s    *Store
	base *table // serving when Stage read the files
	next *table
}

// Stage reads every pair from disk again, as Reload does, without
// serving the result. Unlike Reload, a pair that fails to load is an
// error: the caller's reload fails and the serving table is untouched.
// Pairs whose bytes did not change keep their entries and staples.
func (s *Store) Stage() (*Staged, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	old := s.cur.Load()
	t, errs := s.build(old, false)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Staged{s: s, base: old, next: t}, nil
}

// Commit serves the staged table. When a reload on file change swapped
// in another table since Stage, that one stays: it read the same files
// later.
func (st *Staged) Commit() {
	s := st.s
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if s.cur.Load() == st.base {
		s.swap(st.base, st.next)
	}
}

// swap serves t in place of old, logs the pairs whose certificate
// changed and has the OCSP loop plan for t's entries. reloadMu must be
// held.
func (s *Store) swap(old, t *table) {
	s.cur.Store(t)
	s.logChanged(old, t)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// logChanged logs the pairs whose entry t replaced; both tables come
// from s.cfg, so their entries line up.
func (s *Store) logChanged(old, t *table) {
	logNew := func(prev, e *entry) {
		if e != nil && e != prev {
			s.log.Info("certificate reloaded", "cert", e.pair.CertFile, "not_after", e.leaf.NotAfter)
		}
	}
	logNew(old.def, t.def)
	for i, e := range t.hosts {
		logNew(old.hosts[i], e)
	}
}

// build loads every pair. With old set, a pair that is unchanged keeps
// its entry, and with keepOld one that fails keeps its old entry; errors
// are collected. Without keepOld a failed pair has no entry, and the
// table must not serve.
func (s *Store) build(old *table, keepOld bool) (*table, []error) {
	var errs []error
	load := func(p Pair, prev *entry, what string) *entry {
		e, err := loadEntry(p)
		switch {
		case err != nil && prev != nil && keepOld:
			errs = append(errs, fmt.Errorf("certs: %s: %w (keeping the old certificate)", what, err))
			return prev
		case err != nil:
			errs = append(errs, fmt.Errorf("certs: %s: %w", what, err))
			return nil
		case prev != nil && sameChain(prev.cert, e.cert):
			return prev
		}
		return e
	}
	t := &table{exact: make(map[string]*entry), wild: make(map[string]*entry)}
	if s.cfg.hasDefault() {
		var prev *entry
		if old != nil {
			prev = old.def
		}
		t.def = load(s.cfg.Default, prev, "default certificate")
	}
	for i, p := range s.cfg.Hosts {
		var prev *entry
		if old != nil {
			prev = old.hosts[i]
		}
		e := load(p, prev, fmt.Sprintf("host certificate %d (%s)", i, p.CertFile))
		t.hosts = append(t.hosts, e)
		if e == nil {
			continue
		}
		for _, n := range p.Names {
			n = normalizeName(n)
			if suffix, ok := strings.CutPrefix(n, "*."); ok {
				t.wild[suffix] = e
			} else {
				t.exact[n] = e
			}
			s.warnNameMismatch(e, n)
		}
	}
	return t, errs
}

func (s *Store) warnNameMismatch(e *entry, name string) {
	probe := name
	if suffix, ok := strings.CutPrefix(name, "*."); ok {
		probe = "wildcard-probe." + suffix
	}
	if err := e.leaf.VerifyHostname(probe); err != nil {
		s.log.Warn("certificate does not cover configured name", "cert", e.pair.CertFile, "name", name, "err", err)
	}
}

func loadEntry(p Pair) (*entry, error) {
	cert, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
	if err != nil {
		return nil, err
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parse leaf: %w", err)
		}
		cert.Leaf = leaf
	}
	e := &entry{pair: p, cert: &cert, leaf: leaf}
	if len(cert.Certificate) > 1 {
		issuer, err := x509.ParseCertificate(cert.Certificate[1])
		if err != nil {
			return nil, fmt.Errorf("parse issuer: %w", err)
		}
		e.issuer = issuer
	}
	return e, nil
}

func sameChain(a, b *tls.Certificate) bool {
	if len(a.Certificate) != len(b.Certificate) {
		return false
	}
	for i := range a.Certificate {
		if !bytes.Equal(a.Certificate[i], b.Certificate[i]) {
			return false
		}
	}
	return true
}

// Store.GetCertificate fits tls.Config.GetCertificate.
var _ func(*tls.ClientHelloInfo) (*tls.Certificate, error) = (*Store)(nil).GetCertificate
