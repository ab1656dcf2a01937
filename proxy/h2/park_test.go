package h2

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/conns"
)

func waitConnStats(t *testing.T, s *Server, what string, ok func(conns.Stats) bool) {
	t.Helper()
	if !testbed.Poll(5*time.Second, func() bool { return ok(s.Listener().Stats()) }) {
		t.Fatalf("%s: stats %+v", what, s.Listener().Stats())
	}
}

// An idle keep-alive HTTP/1.1 connection of the plain listener (a
// terminator's pooled one) is parked as the main listener's are, and
// its next request is answered as the first was, still counted as TLS
// behind a terminator; an HTTP/2 connection beside it is never parked.
func TestIdleHTTP1ConnectionOfThePlainListenerIsParkedAndServedAgain(t *testing.T) {
	for _, behindTLS := range []bool{false, true} {
		t.Run("behind_tls="+strconv.FormatBool(behindTLS), func(t *testing.T) {
			srv := start(t, Config{Name: "h2c", Addr: "127.0.0.1:0", H2C: true, BehindTLS: behindTLS, Park: true,
				ReadTimeout: 5 * time.Second, IdleTimeout: time.Minute}, echo)
			h2c := h2cClient(t)
			url := "http://" + srv.Addr().String() + "/x"
			if r, _ := get(t, h2c, url); r.ProtoMajor != 2 {
				t.Fatalf("h2c request over %s", r.Proto)
			}
			c := dial(t, srv.Addr().String())
			c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			for i := range 3 {
				io.WriteString(c, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || resp.Header.Get("X-TLS") != strconv.FormatBool(behindTLS) {
					t.Fatalf("request %d: status %d, X-TLS %q", i+1, resp.StatusCode, resp.Header.Get("X-TLS"))
				}
				waitConnStats(t, srv, "parked", func(st conns.Stats) bool { return st.Parked == 1 && st.Parks == uint64(i+1) })
			}
			if r, _ := get(t, h2c, url); r.ProtoMajor != 2 || r.StatusCode != 200 {
				t.Fatalf("h2c request after the parks: %s %d", r.Proto, r.StatusCode)
			}
			if st := srv.Listener().Stats(); st.Open != 2 {
				t.Errorf("open connections %d, want the h2c one and the parked one", st.Open)
			}
		})
	}
}
