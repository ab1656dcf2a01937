package main_test

// End-to-end tests of HTTP/3 (issue 20) through the built binary, with
// quic-go's own HTTP/3 client and, where the test must see frames (GOAWAY)
// or send what no client library would, a raw QUIC connection speaking
// HTTP/3 by hand.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// startH3Ramjet is startTLSRamjet with HTTP/3 on.
func startH3Ramjet(t testing.TB, p *pki, originURL string, args ...string) *tlsRamjet {
	t.Helper()
	return startTLSRamjet(t, p, originURL, append([]string{"--http3"}, args...)...)
}

// h3Client is quic-go's HTTP/3 client dialling the TLS listener's port
// over UDP whatever host the URL names (its host is the server name).
// Clients made with one cache resume each other's sessions (0-RTT).
func (r *tlsRamjet) h3Client(t testing.TB, cache tls.ClientSessionCache) *http.Client {
	t.Helper()
	return r.h3ClientVia(t, cache, r.TLSAddr)
}

// h3ClientVia is h3Client sending its datagrams to addr (a relay).
func (r *tlsRamjet) h3ClientVia(t testing.TB, cache tls.ClientSessionCache, addr string) *http.Client {
	t.Helper()
	tr := &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: r.pki.ca.Pool(), ClientSessionCache: cache},
		QUICConfig:      &quic.Config{MaxIdleTimeout: 20 * time.Second},
		Dial: func(ctx context.Context, _ string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			return quic.DialAddrEarly(ctx, addr, tc, qc)
		},
	}
	t.Cleanup(func() { tr.Close() })
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &http.Client{Transport: tr, Timeout: 30 * time.Second, CheckRedirect: noRedirect}
}

func TestH3SameAnswersAsH1AndH2(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	logFile := filepath.Join(t.TempDir(), "access.log")
	cfg := testbed.WriteConfig(t, "", "access_log:\n  path: "+logFile+"\n  format: combined\n"+
		"hosts:\n  - names: [tcp-only.test]\n    alt_svc: false\n")
	rj := startH3Ramjet(t, newPKI(t), o.URL, "--config", cfg)
	clients := map[string]*http.Client{"h1": rj.client(t, "h1"), "h2": rj.client(t, "h2"), "h3": rj.h3Client(t, nil)}
	major := map[string]int{"h1": 1, "h2": 2, "h3": 3}

	for _, tt := range []struct{ name, path, accept, first string }{
		{"h3 fills, h1 h2 h3 hit", "/e/h3-share-a?" + hq("Cache-Control: max-age=60"), "", "h3"},
		{"h2 fills, h3 hits", "/e/h3-share-b?" + hq("Cache-Control: max-age=60"), "", "h2"},
		{"30 KB gzipped over every protocol", "/e/h3-share-c?size=30000&" + hq("Cache-Control: max-age=60"), "gzip", "h1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := rj.HTTPS("localhost", tt.path)
			var hdr []string
			if tt.accept != "" {
				hdr = []string{"Accept-Encoding: " + tt.accept}
			}
			mustMissStored(t, get(t, clients[tt.first], u, hdr...), tt.first+" first")
			var hits []result
			for _, p := range []string{"h1", "h2", "h3"} {
				r := protoGet(t, clients[p], major[p], u, hdr...)
				mustFreshHit(t, r, p+" after "+tt.first)
				hits = append(hits, r)
			}
			for i, r := range hits[1:] {
				if !bytes.Equal(r.Body, hits[0].Body) {
					t.Fatalf("body over %s differs from h1's", []string{"h2", "h3"}[i])
				}
				for _, h := range []string{"Cache-Status", "Content-Type", "Content-Encoding", "ETag", "Content-Length", "Vary"} {
					if r.Header.Get(h) != hits[0].Header.Get(h) {
						t.Errorf("%s: %q over h1, %q over %s", h, hits[0].Header.Get(h), r.Header.Get(h), []string{"h2", "h3"}[i])
					}
				}
			}
			if tt.accept != "" && hits[2].Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("h3 Content-Encoding %q, want gzip", hits[2].Header.Get("Content-Encoding"))
			}
			if n := o.waitRequests(t, strings.SplitN(tt.path, "?", 2)[0], 1); n != 1 {
				t.Errorf("origin saw %d requests, want 1", n)
			}
		})
	}

	// A miss looks the same over each protocol.
	var misses []string
	for _, p := range []string{"h1", "h2", "h3"} {
		r := get(t, clients[p], rj.HTTPS("localhost", "/e/h3-miss-"+p+"?"+hq("Cache-Control: max-age=60")))
		mustMissStored(t, r, p+" miss")
		misses = append(misses, r.Header.Get("Cache-Status")+" "+r.Header.Get("Content-Type"))
	}
	if misses[0] != misses[1] || misses[0] != misses[2] {
		t.Errorf("misses differ by protocol: %q", misses)
	}

	// A miss over h3 tells the origin it came over HTTPS, from the client.
	r := get(t, clients["h3"], rj.HTTPS("localhost", "/e/h3-miss"))
	e := r.Echo()
	if e["hdr.x-forwarded-proto"] != "https" || !strings.HasSuffix(e["hdr.x-forwarded-for"], "127.0.0.1") {
		t.Errorf("origin saw X-Forwarded-Proto %q, X-Forwarded-For %q", e["hdr.x-forwarded-proto"], e["hdr.x-forwarded-for"])
	}

	// Alt-Svc on TLS responses, not on plain ones nor for a host that opts out.
	want := `h3=":` + rj.Port + `"; ma=86400`
	for _, p := range []string{"h1", "h2", "h3"} {
		if got := get(t, clients[p], rj.HTTPS("localhost", "/static/page725.html")).Header.Get("Alt-Svc"); got != want {
			t.Errorf("Alt-Svc over %s = %q, want %q", p, got, want)
		}
	}
	if got := get(t, newClient(t), rj.URL+"/static/page725.html").Header.Get("Alt-Svc"); got != "" {
		t.Errorf("Alt-Svc %q over plain HTTP", got)
	}
	if got := get(t, clients["h2"], rj.HTTPS("localhost", "/static/page725.html"), "Host: tcp-only.test").Header.Get("Alt-Svc"); got != "" {
		t.Errorf("Alt-Svc %q for a host with alt_svc: false", got)
	}

	// The access log names the protocol as nginx does; the metrics count it.
	if !testbed.Poll(5*time.Second, func() bool {
		b, _ := os.ReadFile(logFile)
		return bytes.Contains(b, []byte(`"GET /e/h3-miss HTTP/3.0" 200`))
	}) {
		b, _ := os.ReadFile(logFile)
		t.Errorf("no HTTP/3.0 line in the access log:\n%s", b)
	}
	for _, p := range []string{"h1", "h2", "h3"} {
		if n := metricValue(t, rj.AdminURL, `ramjet_client_requests_total{protocol="`+p+`"}`); n < 3 {
			t.Errorf("%s requests counted: %v", p, n)
		}
		if n := metricValue(t, rj.AdminURL, `ramjet_client_response_bytes_total{protocol="`+p+`"}`); n < 725 {
			t.Errorf("%s bytes counted: %v", p, n)
		}
		if n := metricValue(t, rj.AdminURL, `ramjet_tls_handshakes_total{protocol="`+p+`",resumed="false"}`); n < 1 {
			t.Errorf("%s handshakes counted: %v", p, n)
		}
	}
}

func TestH3TwoMiBBodiesByteExactBothWays(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startH3Ramjet(t, newPKI(t), o.URL)
	c := rj.h3Client(t, nil)
	u := rj.HTTPS("localhost", "/e/h3-big?size=2097152&"+hq("Cache-Control: max-age=60"))
	miss := get(t, c, u)
	mustMissStored(t, miss, "2 MiB over h3")
	hit := get(t, c, u)
	mustFreshHit(t, hit, "2 MiB over h3, again")
	h1 := get(t, rj.client(t, "h1"), u)
	if len(hit.Body) < 2<<20 || !bytes.Equal(hit.Body, miss.Body) || !bytes.Equal(hit.Body, h1.Body) {
		t.Fatalf("2 MiB page: miss %d, hit %d, h1 %d bytes, equal %v %v", len(miss.Body), len(hit.Body), len(h1.Body),
			bytes.Equal(hit.Body, miss.Body), bytes.Equal(hit.Body, h1.Body))
	}

	up := make([]byte, 2<<20)
	_, _ = rand.Read(up) // never fails
	sum := sha256.Sum256(up)
	r, err := tryDo(c, http.MethodPost, rj.HTTPS("localhost", "/upload"), bytes.NewReader(up), "Content-Type: application/octet-stream")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, http.StatusOK, "2 MiB upload over h3")
	if e := r.Echo(); e["len"] != "2097152" || e["sha256"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("origin received %s bytes with sha256 %s", e["len"], e["sha256"])
	}
}

// h3Leaf completes a QUIC handshake asking for serverName and returns the
// leaf presented (not verified: the default one is presented for names
// it does not cover).
func h3Leaf(t testing.TB, r *tlsRamjet, serverName string) *big.Int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(ctx, r.TLSAddr, &tls.Config{ServerName: serverName, InsecureSkipVerify: true, NextProtos: []string{"h3"}}, nil)
	if err != nil {
		t.Fatalf("QUIC handshake for %q: %v", serverName, err)
	}
	defer qc.CloseWithError(0, "")
	leaf := qc.ConnectionState().TLS.PeerCertificates[0]
	if serverName == "shop.test" && leaf.Subject.CommonName != "shop.test" {
		t.Fatalf("SNI shop.test got the certificate of %q", leaf.Subject.CommonName)
	}
	return leaf.SerialNumber
}

func TestH3SNIAndCertificateRotation(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	p := newPKI(t)
	shopCert, shopKey := p.issue(t, "shop", "shop.test")
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf("tls:\n  hosts:\n    - names: [shop.test]\n      cert: %s\n      key: %s\n", shopCert, shopKey))
	rj := startH3Ramjet(t, p, o.URL, "--config", cfg)
	h3Leaf(t, rj, "shop.test") // checks the name
	// Verified requests for both names over h3.
	c := rj.h3Client(t, nil)
	for _, host := range []string{"localhost", "shop.test"} {
		mustStatus(t, get(t, c, rj.HTTPS(host, "/static/page725.html")), http.StatusOK, "h3 to "+host)
	}

	before := h3Leaf(t, rj, "localhost")
	p.ca.Issue(t, "", "localhost", "127.0.0.1").Write(t, p.dir, "default")
	if !testbed.Poll(5*time.Second, func() bool { return h3Leaf(t, rj, "localhost").Cmp(before) != 0 }) {
		t.Fatalf("a new h3 connection still gets serial %v 5 s after the files changed", before)
	}
}

func TestH30RTTGetAcceptedPostNot(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startH3Ramjet(t, newPKI(t), o.URL)
	cache := tls.NewLRUClientSessionCache(4)
	first := rj.h3Client(t, cache)
	mustStatus(t, get(t, first, rj.HTTPS("localhost", "/e/h3-0rtt-warm")), http.StatusOK, "1-RTT request")
	first.Transport.(*http3.Transport).Close() // the ticket stays in cache

	// Through a relay that delays ramjet's packets: the GET reaches
	// ramjet before the handshake can have completed.
	resumed := rj.h3ClientVia(t, cache, testbed.StartUDPRelay(t, rj.TLSAddr, 200*time.Millisecond).Addr)
	r, err := tryDo(resumed, http3.MethodGet0RTT, rj.HTTPS("localhost", "/e/h3-0rtt-get"), nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, http.StatusOK, "0-RTT GET")
	if got := r.Echo()["hdr.early-data"]; got != "1" {
		t.Errorf("origin saw Early-Data %q on a GET sent as 0-RTT data, want 1", got)
	}
	if n := metricValue(t, rj.AdminURL, `ramjet_zero_rtt_requests_total{protocol="h3",result="accepted"}`); n != 1 {
		t.Errorf("0-RTT accepted: %v, want 1", n)
	}
	if n := metricValue(t, rj.AdminURL, `ramjet_tls_handshakes_total{protocol="h3",resumed="true"}`); n != 1 {
		t.Errorf("resumed h3 handshakes: %v, want 1", n)
	}
	// quic-go's client sends a POST only once the handshake is done, and
	// ramjet would hold one that came early until then: no Early-Data.
	r, err = tryDo(resumed, http.MethodPost, rj.HTTPS("localhost", "/e/h3-0rtt-post"), strings.NewReader("a=1"))
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, http.StatusOK, "POST on the resumed connection")
	if got := r.Echo()["hdr.early-data"]; got != "" {
		t.Errorf("origin saw Early-Data %q on a POST", got)
	}
	if n := metricValue(t, rj.AdminURL, `ramjet_zero_rtt_requests_total{protocol="h3",result="accepted"}`); n != 1 {
		t.Errorf("0-RTT accepted after the POST: %v, want 1", n)
	}
}

// rawH3 is a QUIC connection speaking HTTP/3 by hand.
type rawH3 struct {
	qc   *quic.Conn
	ctrl *quic.ReceiveStream // the server's control stream, after its SETTINGS
}

func dialRawH3(t testing.TB, addr string, ca *pki) *rawH3 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(ctx, addr, &tls.Config{RootCAs: ca.ca.Pool(), ServerName: "localhost", NextProtos: []string{"h3"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	ours, err := qc.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ours.Write([]byte{0x00, 0x04, 0x00}); err != nil { // control stream, empty SETTINGS
		t.Fatal(err)
	}
	ctrl, err := qc.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rd := quicvarint.NewReader(ctrl)
	if typ, err := quicvarint.Read(rd); err != nil || typ != 0 {
		t.Fatalf("server's first unidirectional stream: type %d, %v", typ, err)
	}
	if typ, _, err := readRawFrame(rd); err != nil || typ != 0x4 {
		t.Fatalf("server's control stream starts with frame %#x (%v), want SETTINGS", typ, err)
	}
	return &rawH3{qc: qc, ctrl: ctrl}
}

func readRawFrame(rd quicvarint.Reader) (typ uint64, payload []byte, err error) {
	if typ, err = quicvarint.Read(rd); err != nil {
		return 0, nil, err
	}
	n, err := quicvarint.Read(rd)
	if err != nil {
		return 0, nil, err
	}
	payload = make([]byte, n)
	_, err = io.ReadFull(rd, payload)
	return typ, payload, err
}

// get sends a GET for path with extra fields and ends the stream's send
// side.
func (c *rawH3) get(t testing.TB, path string, extra ...qpack.HeaderField) *quic.Stream {
	t.Helper()
	st, err := c.qc.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	var block bytes.Buffer
	enc := qpack.NewEncoder(&block)
	for _, f := range append([]qpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: path}}, extra...) {
		_ = enc.WriteField(f) // writes to memory
	}
	frame := quicvarint.Append(quicvarint.Append(nil, 0x1), uint64(block.Len()))
	if _, err := st.Write(append(frame, block.Bytes()...)); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	return st
}

// response reads a response: its :status and its body.
func rawResponse(st *quic.Stream) (status string, body []byte, err error) {
	rd := quicvarint.NewReader(st)
	for {
		typ, p, err := readRawFrame(rd)
		if errors.Is(err, io.EOF) && status != "" {
			return status, body, nil
		}
		if err != nil {
			return status, body, err
		}
		switch typ {
		case 0x1:
			dec := qpack.NewDecoder().Decode(p)
			for {
				f, err := dec()
				if err != nil {
					break
				}
				if f.Name == ":status" {
					status = f.Value
				}
			}
		case 0x0:
			body = append(body, p...)
		}
	}
}

func TestH3GoAwayOnSIGTERMWithStreamInFlight(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	p := newPKI(t)
	rj := startH3Ramjet(t, p, o.URL)
	c := dialRawH3(t, rj.TLSAddr, p)
	st := c.get(t, "/e/h3-drain?sleep_ms=1500&mark=h3-drain")
	if !testbed.Poll(5*time.Second, func() bool { return o.marked("h3-drain") }) {
		t.Fatal("the slow request never reached the origin")
	}
	rj.Signal(t, syscall.SIGTERM)

	_ = c.ctrl.SetReadDeadline(time.Now().Add(5 * time.Second))
	typ, payload, err := readRawFrame(quicvarint.NewReader(c.ctrl))
	if err != nil || typ != 0x7 {
		t.Fatalf("after SIGTERM the control stream carried frame %#x (%v), want GOAWAY", typ, err)
	}
	if id, _, _ := quicvarint.Parse(payload); id != 4 {
		t.Errorf("GOAWAY names stream %d, want 4 (stream 0 is in flight and served)", id)
	}
	status, body, err := rawResponse(st)
	if err != nil || status != "200" || !bytes.Contains(body, []byte("uri")) {
		t.Fatalf("in-flight stream after GOAWAY: status %q, %d bytes, %v", status, len(body), err)
	}
	if code := rj.Wait(t, testbed.StopTimeout); code != 0 {
		t.Fatalf("ramjet exited %d after SIGTERM, want 0:\n%s", code, rj.Output())
	}
}

func TestH3ProtocolAbuseThenGoodRequest(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	p := newPKI(t)
	cfg := testbed.WriteConfig(t, "", "tls:\n  h3_max_streams: 8\nserver:\n  max_header_bytes: 8KiB\n")
	rj := startH3Ramjet(t, p, o.URL, "--config", cfg)
	good := func(what string) {
		t.Helper()
		mustStatus(t, get(t, rj.h3Client(t, nil), rj.HTTPS("localhost", "/static/page725.html")), http.StatusOK, "good request after "+what)
	}

	// Garbage datagrams: short, long, and a fake long-header Initial.
	udp, err := net.Dial("udp", rj.TLSAddr)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 20, 1200, 1500} {
		b := make([]byte, n)
		_, _ = rand.Read(b) // never fails
		if n == 1200 {
			b[0] = 0xc0 // long header, Initial
		}
		if _, err := udp.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	udp.Close()
	good("garbage datagrams")

	// A request stream carrying garbage closes that connection, not others.
	c := dialRawH3(t, rj.TLSAddr, p)
	st, err := c.qc.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	_, _ = st.Write([]byte{0x01, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff}) // HEADERS with a broken QPACK block
	_ = st.Close()
	select {
	case <-c.qc.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a malformed field section did not close the connection")
	}
	good("a malformed field section")

	// Oversized headers get 431 on a connection that goes on serving.
	c = dialRawH3(t, rj.TLSAddr, p)
	status, _, err := rawResponse(c.get(t, "/static/page725.html", qpack.HeaderField{Name: "x-big", Value: strings.Repeat("b", 16<<10)}))
	if err != nil || status != "431" {
		t.Fatalf("oversized headers: status %q, %v", status, err)
	}
	status, _, err = rawResponse(c.get(t, "/static/page725.html"))
	if err != nil || status != "200" {
		t.Fatalf("after 431 on the same connection: status %q, %v", status, err)
	}

	// More streams than allowed at once: the client waits for credit, the
	// slow ones finish, every request is answered.
	hc := rj.h3Client(t, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for i := range 24 {
		wg.Go(func() {
			r, err := tryDo(hc, http.MethodGet, rj.HTTPS("localhost", fmt.Sprintf("/e/h3-streams-%d?sleep_ms=100", i)), nil)
			if err == nil && r.Status != http.StatusOK {
				err = fmt.Errorf("status %d", r.Status)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("one of 24 concurrent requests on 8 streams: %v", err)
		}
	}
	good("24 requests on 8 streams")
}

func TestH3PurgeAndESI(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startH3Ramjet(t, newPKI(t), o.URL)
	c := rj.h3Client(t, nil)

	u := rj.HTTPS("localhost", "/e/h3-purge?"+hq("Cache-Control: max-age=60", "X-LiteSpeed-Tag: h3-tag"))
	first := get(t, c, u)
	mustMissStored(t, first, "fill over h3")
	mustFreshHit(t, get(t, c, u), "hit over h3")
	r := do(t, c, "PURGE", u)
	mustStatus(t, r, http.StatusOK, "PURGE over h3")
	if !strings.Contains(string(r.Body), `"purged"`) {
		t.Fatalf("PURGE answer %q", r.Body)
	}
	if again := get(t, c, u); again.CacheStatus().Hit || again.ID() == first.ID() {
		t.Fatalf("after PURGE over h3: %q, id %s (was %s)", again.Header.Get("Cache-Status"), again.ID(), first.ID())
	}

	page := rj.HTTPS("localhost", esiPage("", []string{
		incl("/esi/pub.php?name=a"),
		incl("/esi/priv.php?name=p", `cache-control="private,no-vary"`),
	}))
	var pageID string
	for i := range 2 {
		what := fmt.Sprintf("ESI page over h3, request %d", i+1)
		r := get(t, c, page, alice)
		mustIntactPage(t, r, 2, what)
		mustNoMarkup(t, r, what)
		mustFrag(t, r, "a", what)
		mustFrag(t, r, "p", what)
		if i == 0 {
			pageID = r.ID()
			continue
		}
		mustPageHit(t, r, pageID, what)
	}
}

func TestH3PHPDocroot(t *testing.T) {
	t.Parallel()
	root := phpDocroot(t)
	rj := startH3Ramjet(t, newPKI(t), "", "--config", phpConfig(t, root, ""))
	c := rj.h3Client(t, nil)
	r := get(t, c, rj.HTTPS("localhost", "/hello.php"))
	mustStatus(t, r, http.StatusOK, "hello.php over h3")
	if string(r.Body) != "Hello, World!" {
		t.Fatalf("hello.php body %q", r.Body)
	}
	env := string(get(t, c, rj.HTTPS("localhost", "/env.php")).Body)
	if !strings.Contains(env, "https: on\n") || !strings.Contains(env, "server_port: "+rj.Port+"\n") {
		t.Fatalf("PHP over h3 does not see HTTPS on port %s:\n%s", rj.Port, env)
	}
	r, err := tryDo(c, http.MethodPost, rj.HTTPS("localhost", "/form.php"), strings.NewReader("name=h3&lang=go"),
		"Content-Type: application/x-www-form-urlencoded")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(r.Body), "post.name: h3") {
		t.Fatalf("form POST over h3:\n%s", r.Body)
	}
}

func TestH3ReloadKeepsTheConnection(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	dir := t.TempDir()
	cfg := testbed.WriteConfig(t, dir, "log:\n  level: info\n")
	rj := startH3Ramjet(t, newPKI(t), o.URL, "--config", cfg)
	c := rj.h3Client(t, nil)
	u := rj.HTTPS("localhost", "/static/page725.html")
	if get(t, c, u).Header.Get("Alt-Svc") == "" {
		t.Fatal("no Alt-Svc before the reload")
	}
	testbed.WriteConfig(t, dir, "log:\n  level: info\ndefaults:\n  alt_svc: false\n")
	if !testbed.Poll(10*time.Second, func() bool { return get(t, c, u).Header.Get("Alt-Svc") == "" }) {
		t.Fatalf("alt_svc: false not applied by the reload:\n%s", rj.Output())
	}
	if n := metricValue(t, rj.AdminURL, "ramjet_h3_connections_total"); n != 1 {
		t.Errorf("%v h3 connections, want the one that lived through the reload", n)
	}
}

// TestH3UploadWithSmallFlowControlWindows: with tls.h3_stream_window and
// tls.h3_conn_window at their smallest, a 2 MiB upload over h3 still
// reaches the origin byte-exact (the client waits for credit).
func TestH3UploadWithSmallFlowControlWindows(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	cfg := testbed.WriteConfig(t, "", "tls:\n  h3_stream_window: 16KiB\n  h3_conn_window: 16KiB\n")
	rj := startH3Ramjet(t, newPKI(t), o.URL, "--config", cfg)
	up := make([]byte, 2<<20)
	_, _ = rand.Read(up) // never fails
	sum := sha256.Sum256(up)
	r, err := tryDo(rj.h3Client(t, nil), http.MethodPost, rj.HTTPS("localhost", "/upload"), bytes.NewReader(up), "Content-Type: application/octet-stream")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, http.StatusOK, "2 MiB upload over h3 with 16 KiB windows")
	if e := r.Echo(); e["len"] != "2097152" || e["sha256"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("origin received %s bytes with sha256 %s", e["len"], e["sha256"])
	}
}
