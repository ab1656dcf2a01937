package main_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestSlowClientsDoNotTakeThePHPPool: with a pool of two workers, one
// client trickling a large request body and another not reading a large
// response used to hold both workers for as long as they liked, and every
// other PHP request got 503 after queue_wait. ramjet now reads the body
// whole before it takes a worker, and spools output past 1 MiB to a
// temporary file, freeing the worker when the script ends (nginx's
// client_body and fastcgi buffering): a third client is answered at once.
func TestSlowClientsDoNotTakeThePHPPool(t *testing.T) {
	t.Parallel()
	rj, _ := startPHP(t, "workers: 2\nmin_workers: 2\nqueue_wait: 2s")
	// The trickler: a form body of 1 MiB, of which 128 KiB arrive.
	trickler := dialRamjet(t, rj)
	fmt.Fprintf(trickler, "POST /form.php HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n", 1<<20)
	if _, err := trickler.Write([]byte("a=" + strings.Repeat("x", 128<<10))); err != nil {
		t.Fatal(err)
	}
	// The non-reader: 64 MiB of output, of which it reads the head only.
	reader := dialRamjet(t, rj)
	fmt.Fprintf(reader, "GET /big.php?n=%d HTTP/1.1\r\nHost: localhost\r\n\r\n", 64<<20)
	if st, err := bufio.NewReader(reader).ReadString('\n'); err != nil || !strings.Contains(st, " 200 ") {
		t.Fatalf("big.php: %q, %v", st, err)
	}
	// Before the fix both workers were busy by now; give them up to a
	// second to be taken (they are not, with the fix).
	testbed.Poll(time.Second, func() bool {
		busy := 0
		for _, w := range phpWorkers(t, rj) {
			if w.State == "busy" {
				busy++
			}
		}
		return busy == 2
	})
	c := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	r := get(t, c, rj.URL+"/hello.php")
	if r.Status != 200 || string(r.Body) != "Hello, World!" || time.Since(start) > time.Second {
		t.Fatalf("hello.php beside two slow clients: %d %q after %v, want 200 at once", r.Status, r.Body, time.Since(start))
	}
	// The trickler's body, once complete, still reaches PHP.
	if _, err := trickler.Write([]byte(strings.Repeat("y", 1<<20-2-128<<10))); err != nil {
		t.Fatal(err)
	}
	st, err := bufio.NewReader(trickler).ReadString('\n')
	if err != nil || !strings.Contains(st, " 200 ") {
		t.Fatalf("the trickled form: %q, %v", st, err)
	}
}

func dialRamjet(t *testing.T, rj *testbed.Ramjet) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", rj.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPHPReadsTheBodyTheWAFInspected: with the WAF on, a form body past
// the server's 64 KiB buffer is read once, by the WAF, and PHP gets that
// very buffer, whole (and chunked: PHP still gets CONTENT_LENGTH).
func TestPHPReadsTheBodyTheWAFInspected(t *testing.T) {
	t.Parallel()
	root := phpDocroot(t)
	rj := startRamjet(t, "", "--config", testbed.WriteConfig(t, "", fmt.Sprintf(`defaults:
  docroot:
    root: %q
    php: {workers: 1}
  waf:
    mode: block
`, root)))
	c := &http.Client{Timeout: 20 * time.Second}
	field := strings.Repeat("z", 300<<10)
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader("big=" + field)
		if chunked {
			body = io.MultiReader(body) // no length: sent chunked
		}
		r, err := tryDo(c, "POST", rj.URL+"/form.php", body, "Content-Type: application/x-www-form-urlencoded")
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != 200 || !strings.Contains(string(r.Body), "post.big: "+field+"\n") {
			t.Fatalf("chunked %v: %d, body of %d bytes: %.200q", chunked, r.Status, len(r.Body), r.Body)
		}
	}
}
