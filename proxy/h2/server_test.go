package h2

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func TestH1AndH2GetIdenticalResponses(t *testing.T) {
	env := startTLS(t, echo, nil)
	h1, h2 := env.h1Client(t), env.h2Client(t)
	paths := []string{"/", "/a/b?x=1&y=%20z", "/big", "/nocontent"}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			r1, b1 := get(t, h1, env.url(p), "X-Req", "v", "Cookie", "c1=1; c2=2")
			r2, b2 := get(t, h2, env.url(p), "X-Req", "v", "Cookie", "c1=1; c2=2")
			if r1.ProtoMajor != 1 || r2.ProtoMajor != 2 {
				t.Fatalf("protocols %s and %s, want HTTP/1.1 and HTTP/2", r1.Proto, r2.Proto)
			}
			if r1.StatusCode != r2.StatusCode {
				t.Errorf("status h1 %d, h2 %d", r1.StatusCode, r2.StatusCode)
			}
			if !bytes.Equal(b1, b2) {
				t.Errorf("bodies differ: h1 %d bytes %q…, h2 %d bytes %q…", len(b1), head(b1), len(b2), head(b2))
			}
			r1.Header.Del("Date")
			r2.Header.Del("Date")
			for k, v1 := range r1.Header {
				if v2 := r2.Header[k]; !slices.Equal(v1, v2) {
					t.Errorf("header %s: h1 %q, h2 %q", k, v1, v2)
				}
			}
			for k := range r2.Header {
				if _, ok := r1.Header[k]; !ok {
					t.Errorf("header %s only over h2: %q", k, r2.Header[k])
				}
			}
		})
	}
	// What the handler saw, over h2; split cookie fields are joined
	// (RFC 9113 §8.2.3).
	r, _ := get(t, h2, env.url("/q?x=1"), "Cookie", "c1=1", "Cookie", "c2=2")
	want := map[string]string{
		"X-Method": "GET", "X-URI": "/q?x=1", "X-Host": env.addr, "X-TLS": "true",
		"X-Remote-IP": "127.0.0.1", "X-Cookie": "c1=1; c2=2",
	}
	for k, v := range want {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if _, body := get(t, h2, env.url("/proto")); string(body) != `proto="HTTP/2.0" behind=false terminator=false` {
		t.Errorf("transport over h2: %s", body)
	}
	if _, body := get(t, h1, env.url("/proto")); string(body) != `proto="" behind=false terminator=false` {
		t.Errorf("transport over h1: %s", body)
	}
}

func head(b []byte) []byte { return b[:min(len(b), 40)] }

func TestHeadOverH2KeepsContentLength(t *testing.T) {
	env := startTLS(t, func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.SetContentLength(1234) // a HEAD answered from a GET's entry
	}, nil)
	req, _ := http.NewRequest(http.MethodHead, env.url("/"), nil)
	for name, c := range map[string]*http.Client{"h1": env.h1Client(t), "h2": env.h2Client(t)} {
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ContentLength != 1234 {
			t.Errorf("%s: HEAD Content-Length %d, want 1234", name, resp.ContentLength)
		}
	}
}

// Eight 200 ms requests on one connection run side by side: about
// 200 ms, not 1.6 s as with a server that serves streams in turn.
func TestConcurrentStreamsShareOneConnection(t *testing.T) {
	env := startTLS(t, echo, nil)
	c := env.h2Client(t)
	get(t, c, env.url("/")) // open the connection
	var wg sync.WaitGroup
	ports := make([]string, 8)
	start := time.Now()
	for i := range ports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get(env.url("/sleep"))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ports[i] = resp.Header.Get("X-Remote-IP")
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("8 concurrent 200 ms requests over one h2 connection: %v", elapsed)
	if elapsed > time.Second {
		t.Errorf("took %v, want well under 1 s", elapsed)
	}
	if n := env.srv.h2Conns.Load(); n != 1 {
		t.Errorf("%d HTTP/2 connections, want 1", n)
	}
}

// The handler gets the body as a stream while the client is still
// sending it: the bridge does not buffer it first.
func TestRequestBodyStreamsToHandler(t *testing.T) {
	firstChunk := make(chan struct{})
	env := startTLS(t, func(ctx *fasthttp.RequestCtx) {
		if !ctx.Request.IsBodyStream() {
			ctx.Error("body not streamed", fasthttp.StatusInternalServerError)
			return
		}
		body := ctx.RequestBodyStream()
		buf := make([]byte, 5)
		if _, err := io.ReadFull(body, buf); err != nil {
			ctx.Error(err.Error(), fasthttp.StatusBadRequest)
			return
		}
		close(firstChunk) // the client sends the rest only now
		n, err := io.Copy(io.Discard, body)
		if err != nil {
			ctx.Error(err.Error(), fasthttp.StatusBadRequest)
			return
		}
		ctx.SetBodyString(string(buf) + " +" + strconv.FormatInt(n, 10))
	}, nil)
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte("first"))
		select {
		case <-firstChunk:
			pw.Write(bytes.Repeat([]byte("x"), 1<<20))
			pw.Close()
		case <-time.After(5 * time.Second):
			pw.CloseWithError(errors.New("handler never saw the first chunk"))
		}
	}()
	req, _ := http.NewRequest(http.MethodPost, env.url("/"), pr)
	resp, err := env.h2Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "first +1048576" {
		t.Fatalf("status %d, body %q", resp.StatusCode, body)
	}
}

// What a streaming handler flushes reaches the client before the handler
// writes more.
func TestResponseBodyStreamsWithFlush(t *testing.T) {
	gotFirst := make(chan struct{})
	env := startTLS(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			w.WriteString("first\n")
			w.Flush()
			select {
			case <-gotFirst:
			case <-time.After(5 * time.Second):
				return // the test fails on the missing second line
			}
			w.WriteString("second\n")
		})
	}, nil)
	for name, c := range map[string]*http.Client{"h1": env.h1Client(t), "h2": env.h2Client(t)} {
		t.Run(name, func(t *testing.T) {
			resp, err := c.Get(env.url("/"))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			line, err := r.ReadString('\n')
			if line != "first\n" {
				t.Fatalf("first line %q, %v", line, err)
			}
			gotFirst <- struct{}{}
			if line, _ = r.ReadString('\n'); line != "second\n" {
				t.Fatalf("second line %q", line)
			}
		})
	}
}

func TestLargeUploadOverH2(t *testing.T) {
	env := startTLS(t, echo, nil)
	for _, size := range []int{0, 1, 100 << 10, 3 << 20} {
		req, _ := http.NewRequest(http.MethodPost, env.url("/body"), bytes.NewReader(make([]byte, size)))
		resp, err := env.h2Client(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Body-Length"); got != strconv.Itoa(size) {
			t.Errorf("size %d: handler read %s", size, got)
		}
	}
}

func TestH2CPriorKnowledgeAndHTTP1OnOnePlainListener(t *testing.T) {
	for _, behindTLS := range []bool{false, true} {
		t.Run("behind_tls="+strconv.FormatBool(behindTLS), func(t *testing.T) {
			srv := start(t, Config{Name: "h2c", Addr: "127.0.0.1:0", H2C: true, BehindTLS: behindTLS, ReadTimeout: 5 * time.Second}, echo)
			url := "http://" + srv.Addr().String() + "/x"
			r2, b2 := get(t, h2cClient(t), url)
			r1, b1 := get(t, plainClient(t), url)
			if r2.ProtoMajor != 2 || r1.ProtoMajor != 1 {
				t.Fatalf("protocols %s and %s", r2.Proto, r1.Proto)
			}
			if !bytes.Equal(b1, b2) {
				t.Errorf("bodies %q and %q", b1, b2)
			}
			want := strconv.FormatBool(behindTLS)
			if r1.Header.Get("X-TLS") != want || r2.Header.Get("X-TLS") != want {
				t.Errorf("IsTLS h1 %s, h2c %s; want %s", r1.Header.Get("X-TLS"), r2.Header.Get("X-TLS"), want)
			}
		})
	}
}

// A short HTTP/1.0 request, smaller than the HTTP/2 preface, is answered
// without waiting for more bytes.
func TestH2CListenerAnswersShortHTTP1Request(t *testing.T) {
	srv := start(t, Config{Name: "h2c", Addr: "127.0.0.1:0", H2C: true, ReadTimeout: 5 * time.Second}, echo)
	c := dial(t, srv.Addr().String())
	c.SetDeadline(time.Now().Add(2 * time.Second))
	io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.0 200") && !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("status line %q, %v", line, err)
	}
}

func TestConfigValidate(t *testing.T) {
	_, err := NewServer(Config{ReadTimeout: -1}, echo, testLog())
	if err == nil || !strings.Contains(err.Error(), "no listen address") || !strings.Contains(err.Error(), "negative timeout") {
		t.Fatalf("NewServer = %v", err)
	}
	if err := (&Config{Addr: ":0"}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestShutdownWithoutStart(t *testing.T) {
	srv, err := NewServer(Config{Addr: "127.0.0.1:0"}, echo, testLog())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// HTTP/1.1 on the plain listener (from a TLS terminator or beside h2c)
// reaches the connection under the sniffer's wrapper with a body's
// announcement, as the main listener's does, and large answers arrive
// whole and in order on a keep-alive connection.
func TestHTTP1OnThePlainListenerAnnouncesItsBody(t *testing.T) {
	body := make([]byte, 30000)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	h := func(ctx *fasthttp.RequestCtx) {
		a, ok := ctx.Conn().(interface{ WriteBody([]byte) })
		if !ok {
			ctx.Error("the connection takes no body announcement", fasthttp.StatusInternalServerError)
			return
		}
		ctx.SetBody(body)
		a.WriteBody(ctx.Response.Body())
	}
	for _, behindTLS := range []bool{false, true} {
		t.Run("behind_tls="+strconv.FormatBool(behindTLS), func(t *testing.T) {
			srv := start(t, Config{Name: "h2c", Addr: "127.0.0.1:0", H2C: true, BehindTLS: behindTLS, ReadTimeout: 5 * time.Second, WriteBufferSize: 4096}, h)
			c := dial(t, srv.Addr().String())
			c.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n")
			br := bufio.NewReader(c)
			for i := range 2 {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("response %d: %v", i+1, err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, body) {
					t.Fatalf("response %d: status %d, %d bytes (want %d), %v: %q", i+1, resp.StatusCode, len(got), len(body), err, head(got))
				}
			}
		})
	}
}
