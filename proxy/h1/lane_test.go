package h1

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/conns"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// testDeadline bounds each client read and write: a broken lane fails
// the test instead of hanging it.
const testDeadline = 10 * time.Second

var hitBody = []byte("the cached page")

// env is a lane on a yielding, parking listener: Inline answers GET and
// HEAD of /hit (and counts them), fasthttp's handler everything else.
type env struct {
	addr    string
	lane    *Lane
	ln      *conns.Listener
	inline  atomic.Int64
	closeIt atomic.Bool // Inline's answers close their connection
	handled chan string // what the handler saw: method, path, body
	wg      sync.WaitGroup
}

func newEnv(t *testing.T) *env { return newEnvLinger(t, time.Second) }

// newEnvLinger is newEnv whose connections linger this long before they
// park.
func newEnvLinger(t *testing.T, linger time.Duration) *env {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := &env{addr: inner.Addr().String(), handled: make(chan string, 16)}
	e.ln = conns.NewListener(inner, conns.Config{Name: "test", Park: true, Yield: true, Linger: linger, MaxLinger: linger}, log)
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			e.handled <- fmt.Sprintf("%s %s %s", ctx.Method(), ctx.Path(), ctx.PostBody())
			ctx.SetBodyString("from the handler")
		},
		Name:                  "ramjet",
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		ReduceMemoryUsage:     true,
		StreamRequestBody:     false,
		ConnState: func(c net.Conn, st fasthttp.ConnState) {
			if pc, ok := c.(*conns.Conn); ok && st == fasthttp.StateIdle {
				pc.Idle()
			} else if ok && st == fasthttp.StateActive {
				pc.Busy()
			}
		},
		IdleTimeout: time.Minute,
	}
	e.lane = New(Config{Server: srv, Inline: e.answer, Name: "ramjet", IdleTimeout: time.Minute,
		WriteTimeout: time.Minute, Log: streamctx.Logger{Log: log}})
	e.wg.Go(func() {
		for {
			c, err := e.ln.Accept()
			if err != nil {
				return
			}
			e.wg.Go(func() { e.lane.Serve(c) })
		}
	})
	t.Cleanup(func() {
		e.ln.Close()
		e.lane.Stop()
		_ = srv.Shutdown()
		e.wg.Wait()
	})
	return e
}

// answer is the test's Inline: a hit for /hit, declined otherwise.
func (e *env) answer(ctx *fasthttp.RequestCtx) bool {
	if string(ctx.Path()) != "/hit" {
		return false
	}
	e.inline.Add(1)
	ctx.Response.Header.Set("Cache-Status", "test; hit")
	ctx.Response.SetBodyRaw(hitBody)
	if e.closeIt.Load() {
		ctx.SetConnectionClose()
	}
	return true
}

// dial connects a client, closed at the test's end.
func (e *env) dial(t *testing.T) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(testDeadline))
	return c, bufio.NewReader(c)
}

func send(t *testing.T, c net.Conn, raw string) {
	t.Helper()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
}

// read reads one answer to a request of method and returns it, its body
// read whole.
func read(t *testing.T, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("answer: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	return resp, string(b)
}

const getHit = "GET /hit HTTP/1.1\r\nHost: x\r\n\r\n"

// wantInline checks that the lane answered n requests itself.
func (e *env) wantInline(t *testing.T, n int64) {
	t.Helper()
	if got := e.inline.Load(); got != n {
		t.Fatalf("%d answers inline, want %d", got, n)
	}
}

// readHandled reads an answer of the handler to a GET, which saw want.
func (e *env) readHandled(t *testing.T, br *bufio.Reader, want string) {
	t.Helper()
	if _, body := read(t, br, "GET"); body != "from the handler" {
		t.Fatalf("answer %q, want the handler's", body)
	}
	if got := <-e.handled; got != want {
		t.Fatalf("the handler saw %q, want %q", got, want)
	}
}

// readHit reads an answer to a GET and checks it is the hit.
func readHit(t *testing.T, br *bufio.Reader) {
	t.Helper()
	resp, body := read(t, br, "GET")
	wantHit(t, resp, body)
}

func wantHit(t *testing.T, resp *http.Response, body string) {
	t.Helper()
	if resp.StatusCode != 200 || body != string(hitBody) || resp.Header.Get("Cache-Status") != "test; hit" ||
		resp.Header.Get("Server") != "ramjet" || resp.Header.Get("Date") == "" || resp.ContentLength != int64(len(hitBody)) {
		t.Fatalf("answer %d %q %v; want the hit, with Server, Date and its length", resp.StatusCode, body, resp.Header)
	}
}

func TestKeepAliveHitsAreAnsweredInlineWithFasthttpsFields(t *testing.T) {
	e := newEnv(t)
	c, br := e.dial(t)
	for range 3 {
		send(t, c, getHit)
		resp, body := read(t, br, "GET")
		wantHit(t, resp, body)
	}
	e.wantInline(t, 3)
	if len(e.handled) != 0 {
		t.Fatalf("the handler saw %q", <-e.handled)
	}
}

func TestARequestInlineDeclinesReachesTheHandlerWhole(t *testing.T) {
	e := newEnv(t)
	c, br := e.dial(t)
	send(t, c, getHit)
	readHit(t, br)
	send(t, c, "POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
	if _, body := read(t, br, "POST"); body != "from the handler" {
		t.Fatalf("POST answered %q", body)
	}
	if got := <-e.handled; got != "POST /form abc" {
		t.Fatalf("the handler saw %q, want POST /form abc", got)
	}
	send(t, c, getHit) // and the next hit is the lane's again
	readHit(t, br)
	e.wantInline(t, 2)
}

// TestPipelinedRequestsAreAnsweredInOrderByTheLaneAndTheHandler: the
// lane answers pipelined requests until one it hands over; the handler
// answers that one and those sent with it (in ramjet the handler
// answers hits too).
func TestPipelinedRequestsAreAnsweredInOrderByTheLaneAndTheHandler(t *testing.T) {
	e := newEnv(t)
	c, br := e.dial(t)
	send(t, c, getHit) // the connection is the lane's
	readHit(t, br)
	send(t, c, getHit+getHit+"GET /miss HTTP/1.1\r\nHost: x\r\n\r\n"+getHit)
	readHit(t, br)
	readHit(t, br)
	for _, want := range []string{"GET /miss ", "GET /hit "} {
		e.readHandled(t, br, want)
	}
	e.wantInline(t, 3)
	send(t, c, getHit) // the lane's again once the handler let go
	readHit(t, br)
	e.wantInline(t, 4)
}

func TestAHeadSplitAcrossReadsIsAnsweredWhole(t *testing.T) {
	e := newEnv(t)
	c, br := e.dial(t)
	send(t, c, getHit)
	readHit(t, br)
	send(t, c, "GET /miss HTTP/1.1\r\nHo")
	time.Sleep(20 * time.Millisecond) // the client's pause between the halves is what is tested
	send(t, c, "st: x\r\n\r\n")
	e.readHandled(t, br, "GET /miss ")
}

func TestAHeadRequestGetsTheHitsFieldsWithoutItsBody(t *testing.T) {
	e := newEnv(t)
	c, br := e.dial(t)
	send(t, c, "HEAD /hit HTTP/1.1\r\nHost: x\r\n\r\n"+getHit)
	resp, body := read(t, br, "HEAD")
	if resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Length") != fmt.Sprint(len(hitBody)) {
		t.Fatalf("HEAD: %d %q %v; want the hit's length and no body", resp.StatusCode, body, resp.Header)
	}
	readHit(t, br) // the body was not sent: the next answer is where it should be
}

func TestConnectionCloseIsHonouredBothWays(t *testing.T) {
	e := newEnv(t)
	c, br := e.dial(t)
	send(t, c, "GET /hit HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") // fasthttp's to answer and close
	resp, body := read(t, br, "GET")
	if body != "from the handler" || !resp.Close {
		t.Fatalf("answer %q, close %v; want the handler's and the connection closed", body, resp.Close)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after Connection: close, read %v; want EOF", err)
	}

	e.closeIt.Store(true) // Inline's answer closes (an upgrade's handover)
	c, br = e.dial(t)
	send(t, c, getHit)
	resp, body = read(t, br, "GET")
	if body != string(hitBody) || !resp.Close {
		t.Fatalf("answer %q, close %v; want the hit and Connection: close", body, resp.Close)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after an answer with Connection: close, read %v; want EOF", err)
	}
}

func TestStopClosesConnectionsWaitingForTheirNextRequest(t *testing.T) {
	e := newEnv(t)
	c, br := e.dial(t)
	send(t, c, getHit)
	readHit(t, br)
	send(t, c, getHit) // a second answer: the connection now lingers (a second) rather than parks
	readHit(t, br)
	e.lane.Stop()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after Stop, read %v; want the connection closed", err)
	}
}

// TestAStoppingLaneAnswersAConnectionThatHadSentNothingYetOnce: a
// client that connected before the server began to stop and sends its
// request after is answered (Connection: close), whether its connection
// was still waiting for the request or parked for want of it.
func TestAStoppingLaneAnswersAConnectionThatHadSentNothingYetOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		linger time.Duration
	}{{"waiting", time.Second}, {"parked", time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvLinger(t, tc.linger)
			c, br := e.dial(t)
			if tc.linger < time.Second {
				for e.ln.Stats().Parked == 0 {
					time.Sleep(time.Millisecond) // until it parked
				}
			}
			closed := make(chan struct{})
			go func() { // as proxy.Server's Shutdown
				e.lane.Stop()
				e.ln.Close()
				close(closed)
			}()
			for !e.lane.stopping.Load() {
				time.Sleep(time.Millisecond)
			}
			send(t, c, getHit)
			resp, body := read(t, br, "GET")
			if body != string(hitBody) || !resp.Close {
				t.Fatalf("answer %q, close %v; want the hit and Connection: close", body, resp.Close)
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Fatalf("after the answer, read %v; want the connection closed", err)
			}
			<-closed
		})
	}
}

func TestAMalformedRequestGetsFasthttpsAnswer(t *testing.T) {
	e := newEnv(t)
	c, br := e.dial(t)
	send(t, c, getHit)
	readHit(t, br)
	send(t, c, "GET /hit HTTP/1.1\r\nHost x\r\n\r\n")
	resp, _ := read(t, br, "GET")
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a header without a colon: %d, want fasthttp's 400", resp.StatusCode)
	}
	e.wantInline(t, 1)

}

// TestARequestHandedOverAfterAnAnswerReadsTheRestFromTheSocket: a
// request sent with a hit the lane answers, whose body is not all there
// yet, is fasthttp's to read on from the socket.
func TestARequestHandedOverAfterAnAnswerReadsTheRestFromTheSocket(t *testing.T) {
	e := newEnv(t)
	c, br := e.dial(t)
	send(t, c, getHit)
	readHit(t, br)
	send(t, c, getHit+"POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
	readHit(t, br)
	send(t, c, "defghij")
	if _, body := read(t, br, "POST"); body != "from the handler" {
		t.Fatalf("POST answered %q", body)
	}
	if got := <-e.handled; got != "POST /form abcdefghij" {
		t.Fatalf("the handler saw %q, want the whole body", got)
	}
}
