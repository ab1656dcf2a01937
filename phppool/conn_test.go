package phppool

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/fcgi"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// startFake serves h with net/http/fcgi on 127.0.0.1:0.
func startFake(t testing.TB, h http.Handler) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Serve returns the listener's close error on shutdown.
		_ = fcgi.Serve(cl, h)
	}()
	t.Cleanup(func() {
		// Closing an already closed listener is harmless here.
		_ = ln.Close()
		<-done
	})
	return cl
}

func dialFake(t testing.TB, ln net.Listener) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The test is over; a close error is irrelevant.
		_ = c.Close()
	})
	return c
}

func cgiParams(method, uri string, bodyLen int) []Param {
	ps := []Param{
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"REQUEST_METHOD", method},
		{"REQUEST_URI", uri},
		{"SERVER_PROTOCOL", "HTTP/1.1"},
		{"SERVER_NAME", "example.test"},
		{"SERVER_PORT", "80"},
		{"REMOTE_ADDR", "127.0.0.1"},
		{"HTTP_HOST", "example.test"},
	}
	if bodyLen >= 0 {
		ps = append(ps, Param{"CONTENT_LENGTH", strconv.Itoa(bodyLen)}, Param{"CONTENT_TYPE", "application/octet-stream"})
	}
	return ps
}

// pattern returns n deterministic, non-repeating-looking bytes.
func pattern(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

var bigBody = pattern(5 << 20)

func fakeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Path", r.URL.Path)
		io.WriteString(w, "hello "+r.URL.Query().Get("n"))
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		// Copies as it reads: output starts before the body is complete.
		if _, err := io.Copy(w, r.Body); err != nil {
			http.Error(w, err.Error(), 500)
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bigBody)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/notfound", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusNotFound)
	})
	return mux
}

func TestConnServesSequentialRequestsOverOneConnection(t *testing.T) {
	ln := startFake(t, fakeHandler())
	c := dialFake(t, ln)
	tests := []struct {
		name   string
		uri    string
		status int
		body   string
	}{
		{"first request", "/hello?n=1", 200, "hello 1"},
		{"second request", "/hello?n=2", 200, "hello 2"},
		{"status from handler", "/notfound", 404, "gone\n"},
		{"after an error status", "/hello?n=3", 200, "hello 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			app, err := c.Do(context.Background(), cgiParams("GET", tt.uri, -1), nil, &out, nil)
			if err != nil || app != 0 {
				t.Fatalf("Do = %d, %v", app, err)
			}
			status, _, body := splitResponse(t, out.Bytes())
			if status != tt.status || string(body) != tt.body {
				t.Fatalf("got %d %q, want %d %q", status, body, tt.status, tt.body)
			}
		})
	}
	if n := ln.accepted.Load(); n != 1 {
		t.Fatalf("server accepted %d connections, want 1 (keep-conn ignored?)", n)
	}
	if c.Broken() {
		t.Fatal("healthy connection marked broken")
	}
}

func splitResponse(t testing.TB, out []byte) (int, []HeaderField, []byte) {
	t.Helper()
	r := bufioReader(out)
	status, header, err := ReadResponseHead(r)
	if err != nil {
		t.Fatalf("response head of %.80q: %v", out, err)
	}
	body, _ := io.ReadAll(r)
	return status, header, body
}

func TestConnStreamsLargeBodiesByteExact(t *testing.T) {
	ln := startFake(t, fakeHandler())
	c := dialFake(t, ln)
	tests := []struct {
		name  string
		uri   string
		stdin io.Reader
		n     int
	}{
		{"5 MiB request body echoed", "/echo", bytes.NewReader(bigBody), len(bigBody)},
		{"5 MiB response body", "/big", nil, -1},
		{"odd-sized body in small reads", "/echo", io.LimitReader(&slowReader{b: bigBody[:100003]}, 100003), 100003},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := c.Do(ctx, cgiParams("POST", tt.uri, tt.n), tt.stdin, &out, nil); err != nil {
				t.Fatal(err)
			}
			_, _, body := splitResponse(t, out.Bytes())
			want := bigBody
			if tt.n >= 0 {
				want = bigBody[:tt.n]
			}
			if !bytes.Equal(body, want) {
				t.Fatalf("body of %d bytes differs from the %d sent", len(body), len(want))
			}
		})
	}
	if n := ln.accepted.Load(); n != 1 {
		t.Fatalf("accepted %d connections, want 1", n)
	}
}

// slowReader returns at most 777 bytes per Read.
type slowReader struct{ b []byte }

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 777)], r.b)
	r.b = r.b[n:]
	return n, nil
}

func TestConnCapturesStderr(t *testing.T) {
	ln := startFake(t, fakeHandler())
	c := dialFake(t, ln)
	var out, errOut bytes.Buffer
	// net/http/fcgi reports a request it cannot build on STDERR.
	ps := []Param{{"REQUEST_URI", "/hello"}}
	if _, err := c.Do(context.Background(), ps, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "REQUEST_METHOD") {
		t.Fatalf("stderr %q, want the missing REQUEST_METHOD complaint", errOut.String())
	}
}

func TestConnTimeoutOnSlowHandlerBreaksConn(t *testing.T) {
	ln := startFake(t, fakeHandler())
	c := dialFake(t, ln)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Do(ctx, cgiParams("GET", "/slow", -1), nil, io.Discard, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Do took %v after a 150ms deadline", d)
	}
	if !c.Broken() {
		t.Fatal("timed-out connection not marked broken")
	}
	if _, err := c.Do(context.Background(), cgiParams("GET", "/hello", -1), nil, io.Discard, nil); !errors.Is(err, ErrBroken) {
		t.Fatalf("Do on broken conn = %v, want ErrBroken", err)
	}
}

func TestConnCancelClosesConn(t *testing.T) {
	ln := startFake(t, fakeHandler())
	c := dialFake(t, ln)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := c.Do(ctx, cgiParams("GET", "/slow", -1), nil, io.Discard, nil)
	if !errors.Is(err, context.Canceled) || !c.Broken() {
		t.Fatalf("err = %v, broken = %v; want Canceled and broken", err, c.Broken())
	}
}

// failWriter fails every write, like a client that went away.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errClientGone }

var errClientGone = errors.New("client gone")

func TestConnDrainsResponseWhenStdoutFails(t *testing.T) {
	ln := startFake(t, fakeHandler())
	c := dialFake(t, ln)
	_, err := c.Do(context.Background(), cgiParams("GET", "/big", -1), nil, failWriter{}, nil)
	if !errors.Is(err, errClientGone) {
		t.Fatalf("err = %v, want the writer's error", err)
	}
	if c.Broken() {
		t.Fatal("conn broken although the response was drained")
	}
	var out bytes.Buffer
	if _, err := c.Do(context.Background(), cgiParams("GET", "/hello?n=9", -1), nil, &out, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, body := splitResponse(t, out.Bytes()); string(body) != "hello 9" {
		t.Fatalf("next request got %q", body)
	}
}

// errReader fails after some bytes, like a client that dropped its upload.
type errReader struct{ n int }

func (r *errReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errClientGone
	}
	n := min(len(p), r.n)
	r.n -= n
	return n, nil
}

func TestConnRequestBodyErrorBreaksConn(t *testing.T) {
	ln := startFake(t, fakeHandler())
	c := dialFake(t, ln)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Do(ctx, cgiParams("POST", "/echo", 1<<20), &errReader{n: 1000}, io.Discard, nil)
	if !errors.Is(err, ErrRequestBody) || !errors.Is(err, errClientGone) {
		t.Fatalf("err = %v, want ErrRequestBody wrapping the reader's error", err)
	}
	if !c.Broken() {
		t.Fatal("conn with a half-sent body not marked broken")
	}
}

// rawServer answers the first request with the given bytes.
func rawServer(t *testing.T, reply []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		buf := make([]byte, 4096)
		// Read the request (small, one segment is enough here), then reply.
		if _, err := nc.Read(buf); err != nil {
			return
		}
		// The client may already be gone; the test checks its side.
		_, _ = nc.Write(reply)
	}()
	t.Cleanup(func() {
		// Harmless if already closed.
		_ = ln.Close()
		<-done
	})
	return ln.Addr().String()
}

func record(v byte, typ recType, id uint16, content []byte) []byte {
	b := make([]byte, headerLen)
	header{Version: v, Type: typ, ID: id, ContentLength: uint16(len(content)), PaddingLength: uint8(padFor(len(content)))}.encode(b)
	b = append(b, content...)
	return append(b, make([]byte, padFor(len(content)))...)
}

func TestConnProtocolErrorMarksBroken(t *testing.T) {
	tests := []struct {
		name  string
		reply []byte
		want  error
	}{
		{"bad version", record(2, typeStdout, 1, []byte("x")), ErrProtocol},
		{"wrong request id", record(1, typeStdout, 7, []byte("x")), ErrProtocol},
		{"unexpected record type", record(1, typeGetValuesResult, 1, nil), ErrProtocol},
		{"short END_REQUEST", record(1, typeEndRequest, 1, []byte{0}), ErrProtocol},
		{"overloaded", record(1, typeEndRequest, 1, []byte{0, 0, 0, 0, statusOverloaded, 0, 0, 0}), ErrRejected},
		{"connection closed mid-response", record(1, typeStdout, 1, []byte("partial")), io.ErrUnexpectedEOF},
		{"record cut short within the read buffer", record(1, typeStdout, 1, make([]byte, 100))[:headerLen+10], io.ErrUnexpectedEOF},
		{"record larger than the read buffer cut short", record(1, typeStdout, 1, make([]byte, 60000))[:headerLen+40000], io.ErrUnexpectedEOF},
		{"nothing after the header", record(1, typeStdout, 1, make([]byte, 100))[:headerLen], io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := rawServer(t, tt.reply)
			c, err := Dial(context.Background(), "tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err = c.Do(ctx, cgiParams("GET", "/", -1), nil, io.Discard, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !c.Broken() {
				t.Fatal("conn not marked broken")
			}
		})
	}
}
