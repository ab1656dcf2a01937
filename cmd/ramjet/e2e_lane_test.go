package main_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// laneRequests are GETs and HEADs a hostile tenant or an odd client may
// send for a cached page: each must get the same answer whether the
// main listener's lane answers it (keep-alive: package h1, from the
// inline pipeline) or fasthttp does (Connection: close, the page's).
var laneRequests = []string{
	"GET /vh/lane HTTP/1.1\r\nHost: a.test\r\n",
	"GET /vh/lane HTTP/1.1\r\nHost: A.TEST.\r\n",
	"GET /vh/lane HTTP/1.1\r\nHost: a.test:80\r\n",
	"GET /vh/lane HTTP/1.1\r\nHost: b.test\r\n",
	"GET http://b.test/vh/lane HTTP/1.1\r\nHost: a.test\r\n",
	"GET /vh/lane HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n",
	"GET /vh/lane HTTP/1.1\r\n",
	"GET /vh/%6Cane HTTP/1.1\r\nHost: a.test\r\n",
	"GET /vh/x/../lane HTTP/1.1\r\nHost: b.test\r\n",
	"GET /vh/lane?q=1 HTTP/1.1\r\nHost: b.test\r\n",
	"GET /vh/lane?q=<script>alert(1)</script> HTTP/1.1\r\nHost: a.test\r\n",
	"HEAD /vh/lane HTTP/1.1\r\nHost: a.test\r\n",
	"GET /vh/lane HTTP/1.1\r\nHost: a.test\r\nAuthorization: Basic dTpw\r\n",
	"GET /vh/lane HTTP/1.1\r\nHost: a.test\r\nIf-None-Match: *\r\n",
	"GET /vh/lane HTTP/1.1\r\nHost: a.test\r\nRange: bytes=0-4\r\n",
	"GET /vh/lane HTTP/1.1\r\nHost: a.test\r\nConnection: Cache-Control\r\nCache-Control: no-cache\r\n",
}

// TestTheLaneAnswersAsFasthttpDoes: every request of laneRequests,
// sent keep-alive after the page is cached (the lane's), gets what the
// same request gets from fasthttp (sent with Connection: close): the
// status, the body (the one stored: the origin's carry a request id),
// the fields but Date, Age and Connection, and the connection closed
// or not. The lane did answer the hits (its counter).
func TestTheLaneAnswersAsFasthttpDoes(t *testing.T) {
	t.Parallel()
	o := startOriginWith(t, vhostHTTP, vhostServer)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", hostileSitesYAML))
	for _, req := range laneRequests { // fill: fasthttp's
		exchangeRaw(t, rj.Addr, req+"Connection: close\r\n\r\n")
	}
	before := metricValue(t, rj.AdminURL, `ramjet_inline_answers_total{listener="main"}`)
	for _, req := range laneRequests {
		fasthttp := exchangeRaw(t, rj.Addr, req+"Connection: close\r\n\r\n")
		// A refusal closes at once; a kept connection stays open, and
		// waiting longer for it to close would only slow the test down.
		lane := exchangeRawWaiting(t, rj.Addr, req+"\r\n", 300*time.Millisecond)
		if diff := answerDiff(fasthttp, lane); diff != "" {
			t.Errorf("%q: %s", req, diff)
		}
	}
	if n := metricValue(t, rj.AdminURL, `ramjet_inline_answers_total{listener="main"}`) - before; n < 8 {
		t.Errorf("the lane answered %v requests, want the hits' (8 at least)", n)
	}
}

// answerDiff says how the lane's answer differs from fasthttp's to the
// same request; "" when it does not. fasthttp's closes its connection
// (asked to): the lane's does when fasthttp would have without being
// asked (a refusal).
func answerDiff(fasthttp, lane rawAnswer) string {
	var d []string
	if fasthttp.status != lane.status || fasthttp.body != lane.body {
		d = append(d, "lane "+http.StatusText(lane.status)+" "+strings.TrimSpace(lane.body)+
			", fasthttp "+http.StatusText(fasthttp.status)+" "+strings.TrimSpace(fasthttp.body))
	}
	for _, h := range []http.Header{fasthttp.header, lane.header} {
		h.Del("Date")
		h.Del("Age")
		h.Del("Connection")
	}
	if a, b := headerLines(fasthttp.header), headerLines(lane.header); a != b {
		d = append(d, "fields: lane "+b+"; fasthttp "+a)
	}
	if lane.closed && fasthttp.status < 400 {
		d = append(d, "the lane closed the connection")
	}
	return strings.Join(d, "; ")
}

func headerLines(h http.Header) string {
	var b strings.Builder
	_ = h.WriteSubset(&b, nil)
	return b.String()
}
