package proxy

import (
	"bufio"
	"bytes"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// A hit carries the stored response's Date, with Age (RFC 9111 4); every
// other answer the Date of the current second. fasthttp's server writes a
// Date of its own on every response and drops any a handler sets ("Date
// is managed automatically"), unless the response header has its
// noDefaultDate switch on. That switch has no setter: a Server with
// NoDefaultDate turns it on in the headers it gives its handler, CopyTo
// carries it, and a Date parsed into such a header is written as it is.
// So each entry keeps its head as a fasthttp.ResponseHeader (Entry.Head),
// made once when it is stored — the switch copied from undated, the Date
// parsed in, the stored fields added — and a hit copies it, which is also
// cheaper than adding the fields one by one. The other answers keep the
// switch off and get fasthttp's Date, refreshed once a second (over
// HTTP/2, package h2's, likewise).

// undated is an empty response header with the switch on, asked once of
// a fasthttp.Server with NoDefaultDate (over an in-memory connection).
var undated = askUndated()

func askUndated() *fasthttp.ResponseHeader {
	h := new(fasthttp.ResponseHeader)
	s := &fasthttp.Server{NoDefaultDate: true, NoDefaultContentType: true, NoDefaultServerHeader: true,
		Handler: func(ctx *fasthttp.RequestCtx) { ctx.Response.Header.CopyTo(h) }}
	pc := fasthttputil.NewPipeConns()
	defer pc.Close()
	// The pipe buffers both ways: the request is there before the server
	// reads it, and the answer fits in it without a reader, so this never
	// blocks; "Connection: close" ends ServeConn after the one request.
	_, _ = pc.Conn2().Write([]byte("GET / HTTP/1.1\r\nHost: ramjet\r\nConnection: close\r\n\r\n"))
	_ = s.ServeConn(pc.Conn1()) // h is filled before the answer is written
	return h
}

// storedHead makes the head a hit on e copies: the switch, e's Date (or,
// when the origin sent none, the time it arrived: RFC 9110 6.6.1) and its
// stored fields. Content-Type, validators, Age and Cache-Status depend on
// the request and are set per hit. nil when the Date cannot be parsed in;
// the hit then goes out as any other answer, with the current Date.
func storedHead(e *cache.Entry) *fasthttp.ResponseHeader {
	date := e.Date
	if len(date) == 0 {
		date = fasthttp.AppendHTTPDate(nil, unixTime(e.Stored))
	}
	// 304: a status without a body, so the parse neither takes the
	// missing Content-Length for a body read until close nor asks to close
	// the connection; every hit sets its own status.
	block := make([]byte, 0, 64+len(date))
	block = append(block, "HTTP/1.1 304 Not Modified\r\nDate: "...)
	block = append(block, date...)
	block = append(block, "\r\n\r\n"...)
	h := new(fasthttp.ResponseHeader)
	undated.CopyTo(h)
	// A reader just the block's size: bufio's default 4 KiB per stored entry
	// (per entry loaded from the disk tier) is garbage at once.
	if err := h.Read(bufio.NewReaderSize(bytes.NewReader(block), len(block))); err != nil {
		return nil // a Date with bytes no header may hold: not from a parsed response
	}
	// The parsed status line must not outlive the parse: each hit's status
	// is written with its own reason phrase and the server's protocol.
	h.SetStatusMessage(nil)
	h.SetProtocol(nil)
	h.DisableNormalizing() // stored names are canonical
	for _, f := range e.Header {
		h.AddBytesKV(f.Name, f.Value)
	}
	h.EnableNormalizing()
	return h
}
