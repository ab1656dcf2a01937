package origin

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestScanHeaderEndAcrossReads(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		inHdr  bool
	}{
		{"one read", []string{"HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody"}, false},
		{"split CRLF CRLF", []string{"HTTP/1.1 200 OK\r\nA: b\r", "\n\r\nbody"}, false},
		{"split into bytes", []string{"HTTP/1.1 200 OK\r\n", "\r", "\n"}, false},
		{"split after three", []string{"X\r\n\r", "\n"}, false},
		{"no end yet", []string{"HTTP/1.1 200 OK\r\nA: b\r\n"}, true},
		{"lone CRs", []string{"\r\r\r", "\r"}, true},
		{"an interim response only", []string{"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"}, true},
		{"interim responses, then the final one", []string{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early", " Hints\r\nLink: </a.css>\r\n\r", "\nHTTP/1.1 200 OK\r\n\r\n"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &deadlineConn{inHeader: true}
			for _, ch := range tt.chunks {
				c.scanHeader([]byte(ch))
			}
			if c.inHeader != tt.inHdr {
				t.Fatalf("inHeader = %v, want %v", c.inHeader, tt.inHdr)
			}
		})
	}
}

func FuzzScanHeader(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n"), 3)
	f.Add([]byte("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"), 30)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		if split < 0 || split > len(data) {
			split = len(data) / 2
		}
		if len(data) > maxHead {
			return
		}
		c := &deadlineConn{inHeader: true}
		c.LocalAddr()
		c.scanHeader(data[:split])
		c.scanHeader(data[split:])
		want, n := false, 0 // the final header ends: a block that is not interim
		for rest := data; ; n++ {
			i := bytes.Index(rest, []byte("\r\n\r\n"))
			if i < 0 {
				break
			}
			if _, ok := parseInterim(rest[:i+2]); !ok {
				want = true
				break
			}
			rest = rest[i+4:]
		}
		if c.inHeader == want {
			t.Fatalf("found the end = %v, want %v", !c.inHeader, want)
		}
		if len(c.cur.interim) != n {
			t.Fatalf("%d interim responses taken, want %d", len(c.cur.interim), n)
		}
	})
}

func newTestPool(t testing.TB, cfg Config) *Pool {
	t.Helper()
	p, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func do(p *Pool, url string) (int, string, error) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	if err := p.Do(req, resp); err != nil {
		return 0, "", err
	}
	body, err := io.ReadAll(resp.BodyStream())
	resp.CloseBodyStream()
	return resp.StatusCode(), string(body), err
}

func TestFailsOverToNextServer(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "up") }))
	defer up.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	p := newTestPool(t, Config{Servers: []string{dead, up.URL}})
	for i := 0; i < 4; i++ {
		code, body, err := do(p, "/x")
		if err != nil || code != 200 || body != "up" {
			t.Fatalf("request %d: %d %q %v", i, code, body, err)
		}
	}
	if p.Healthy()[strings.TrimPrefix(dead, "http://")] {
		t.Fatal("dead server still marked healthy")
	}
}

func TestErrorsAreClassified(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second)
	}))
	defer slow.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	tests := []struct {
		name, server string
		want         error
	}{
		{"refused is unavailable", dead, ErrUnavailable},
		{"slow header is timeout", slow.URL, ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPool(t, Config{Servers: []string{tt.server}, HeaderTimeout: 200 * time.Millisecond})
			_, _, err := do(p, "/")
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSlowButMovingBodyIsNotCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		w.WriteHeader(200)
		for i := 0; i < 5; i++ {
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	}))
	defer srv.Close()
	// The whole body takes 500ms, longer than the header timeout, but no
	// gap is longer than the body timeout.
	p := newTestPool(t, Config{Servers: []string{srv.URL}, HeaderTimeout: 300 * time.Millisecond, BodyTimeout: 300 * time.Millisecond})
	code, body, err := do(p, "/")
	if err != nil || code != 200 || body != "xxxxx" {
		t.Fatalf("%d %q %v", code, body, err)
	}
}

func TestActiveHealthCheckBringsServerBack(t *testing.T) {
	var healthy = make(chan bool, 1)
	healthy <- false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := <-healthy
		healthy <- ok
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	p := newTestPool(t, Config{Servers: []string{srv.URL},
		Health: HealthConfig{Path: "/health", Interval: 20 * time.Millisecond, Fall: 1, Rise: 1}})
	p.Start(t.Context())
	addr := strings.TrimPrefix(srv.URL, "http://")
	testbed.WaitFor(t, 5*time.Second, "the server marked down", func() bool { return !p.Healthy()[addr] })
	<-healthy
	healthy <- true
	testbed.WaitFor(t, 5*time.Second, "the server marked up again", func() bool { return p.Healthy()[addr] })
}

// An interim response is a 1xx but 101, with its fields as they came.
func TestParseInterimTakesOnly1xxBut101(t *testing.T) {
	tests := []struct {
		name, block string
		status      int
		fields      int
	}{
		{"103 with links", "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\nLink: </b.js>\r\n", 103, 2},
		{"100 without a reason", "HTTP/1.1 100\r\n", 100, 0},
		{"HTTP/1.0", "HTTP/1.0 102 Processing\r\n", 102, 0},
		{"101 ends HTTP/1.1", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n", 0, 0},
		{"a final answer", "HTTP/1.1 200 OK\r\nA: b\r\n", 0, 0},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n", 0, 0},
		{"a bad code", "HTTP/1.1 1x3 Hm\r\n", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im, ok := parseInterim([]byte(tt.block))
			if ok != (tt.status != 0) || im.Status != tt.status || len(im.Fields) != tt.fields {
				t.Fatalf("parseInterim = %+v, %v; want status %d with %d fields", im, ok, tt.status, tt.fields)
			}
		})
	}
}
