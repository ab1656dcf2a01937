package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// origin is the soak's own origin: tagged pages with a version the purge
// check bumps, ESI pages with a fragment, uncacheable misses. It can be
// stopped and started again on the same port.
type origin struct {
	addr     string
	mu       sync.Mutex // guards srv
	srv      *http.Server
	versions [purgePages]atomic.Int64
	down     atomic.Int64 // unix nanos until which 5xx from it are expected
}

const purgePages = 20

func (o *origin) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/hit/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("X-LiteSpeed-Tag", "hits")
		io.WriteString(w, strings.Repeat("h", 725))
	})
	mux.HandleFunc("/news/", func(w http.ResponseWriter, r *http.Request) {
		i, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/news/"))
		i %= purgePages
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-LiteSpeed-Tag", "news-"+strconv.Itoa(i))
		fmt.Fprintf(w, "news %d v=%d;", i, o.versions[i].Load())
	})
	mux.HandleFunc("/esi/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Surrogate-Control", `content="ESI/1.0"`)
		io.WriteString(w, `<html><body>page <esi:include src="/frag/a"/> end</body></html>`)
	})
	mux.HandleFunc("/frag/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=30")
		io.WriteString(w, "fragment")
	})
	mux.HandleFunc("/miss", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, "miss")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(make([]byte, 2<<20))
	})
	return mux
}

func (o *origin) start() error {
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	o.addr = ln.Addr().String()
	srv := &http.Server{Handler: o.handler(), ReadHeaderTimeout: 10 * time.Second}
	o.mu.Lock()
	o.srv = srv
	o.mu.Unlock()
	go srv.Serve(ln)
	return nil
}

func (o *origin) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.srv != nil {
		o.srv.Close()
		o.srv = nil
	}
}

// process is a child the soak started, or a ramjet an upgrade started
// (adopted: not the soak's child, cmd nil).
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	id   int
}

func startProcess(name, dir string, bin string, args ...string) (*process, error) {
	log, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{}), id: cmd.Process.Pid}
	go func() { _ = cmd.Wait(); log.Close(); close(p.done) }()
	return p, nil
}

func (p *process) pid() int { return p.id }

// adopt follows pid, which another process started, until it exits.
func adopt(name string, pid int) *process {
	p := &process{name: name, done: make(chan struct{}), id: pid}
	go func() {
		for alive(pid) {
			time.Sleep(50 * time.Millisecond)
		}
		close(p.done)
	}()
	return p
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	return end < 0 || !strings.HasPrefix(s[end+1:], " Z")
}

// stop sends SIGTERM and waits up to 30 s, then kills.
func (p *process) stop() {
	if p.cmd == nil {
		_ = syscall.Kill(p.id, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(p.id, syscall.SIGKILL)
			<-p.done
		}
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitListening(addr string, d time.Duration) error {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s after %v", addr, d)
}

// writeCert writes a fresh self-signed certificate for localhost,
// atomically (the node's watcher must never read half a file).
func writeCert(certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writeAtomic(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})); err != nil {
		return err
	}
	return writeAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// rss is a process's VmRSS in kB, 0 if gone.
func rss(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func fds(pid int) int {
	e, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	return len(e)
}

// fdKinds counts pid's descriptors by kind (socket, pipe, file,
// anon_inode), for a failure's message: which kind grew.
func fdKinds(pid int) string {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	ents, _ := os.ReadDir(dir)
	n := map[string]int{}
	for _, e := range ents {
		link, err := os.Readlink(dir + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		kind, _, _ := strings.Cut(link, ":")
		if strings.HasPrefix(link, "/") {
			kind = "file"
		}
		n[kind]++
	}
	kinds := make([]string, 0, len(n))
	for k, v := range n {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}

// withArgs are the pids whose command line holds args (NUL-separated).
func withArgs(args ...string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	want := strings.Join(args, "\x00")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), want) && alive(n) {
			out = append(out, n)
		}
	}
	return out
}

// children are the pids whose parent is pid and whose command is name.
func children(pid int, name string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || s[open+1:end] != name {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}
