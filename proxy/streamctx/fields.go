package streamctx

import (
	"iter"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// ServerName is the Server field a response gets when it has none, as
// fasthttp adds its own over HTTP/1.1.
const ServerName = "ramjet"

// Fields are the header fields of one response (status aside) as HTTP/2
// and HTTP/3 send them, for their encoders to take in order: names in
// lower case (RFC 9113 §8.2.1, RFC 9114 §4.2), without the HTTP/1.1
// connection ones. They are built in buffers the owner reuses: a
// response costs no allocation once they have grown.
type Fields struct {
	b    []byte
	ends []int // where each name, then its value, ends in b
}

// Response sets f to resp's fields with Content-Length as fasthttp
// would send it, and Server and Date as fasthttp adds them.
func (f *Fields) Response(resp *fasthttp.Response, status int, head bool) {
	f.b, f.ends = f.b[:0], f.ends[:0]
	var server, date bool
	for k, v := range resp.Header.All() {
		if ConnectionField(k) {
			continue
		}
		name := f.add(k, v)
		switch string(name) {
		case "server":
			server = true
		case "date":
			date = true
		}
	}
	if !server {
		f.b = append(f.b, "server"...)
		f.ends = append(f.ends, len(f.b))
		f.b = append(f.b, ServerName...)
		f.ends = append(f.ends, len(f.b))
	}
	if !date {
		f.b = append(f.b, "date"...)
		f.ends = append(f.ends, len(f.b))
		f.b = append(f.b, Date()...)
		f.ends = append(f.ends, len(f.b))
	}
	if n := ContentLength(resp, head); n >= 0 && !Bodyless(status) {
		f.b = append(f.b, "content-length"...)
		f.ends = append(f.ends, len(f.b))
		f.b = strconv.AppendInt(f.b, int64(n), 10)
		f.ends = append(f.ends, len(f.b))
	}
}

// Interim sets f to an interim response's fields, each a name and a
// value, without the HTTP/1.1 connection ones.
func (f *Fields) Interim(fields [][2][]byte) {
	f.b, f.ends = f.b[:0], f.ends[:0]
	for _, fd := range fields {
		if !ConnectionField(fd[0]) {
			f.add(fd[0], fd[1])
		}
	}
}

// add appends a field, its name in lower case, and returns the name.
func (f *Fields) add(k, v []byte) []byte {
	start := len(f.b)
	for _, c := range k {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		f.b = append(f.b, c)
	}
	f.ends = append(f.ends, len(f.b))
	f.b = append(f.b, v...)
	f.ends = append(f.ends, len(f.b))
	return f.b[start:f.ends[len(f.ends)-2]]
}

// All yields each field's name and value; they alias f until it is set
// again.
func (f *Fields) All() iter.Seq2[[]byte, []byte] {
	return func(yield func(name, value []byte) bool) {
		start := 0
		for i := 0; i+1 < len(f.ends); i += 2 {
			n, v := f.ends[i], f.ends[i+1]
			if !yield(f.b[start:n], f.b[n:v]) {
				return
			}
			start = v
		}
	}
}

// Reset drops buffers grown past what a usual response needs, so that a
// pooled owner keeps no huge header.
func (f *Fields) Reset() {
	if cap(f.b) > 16<<10 {
		f.b = nil
	}
	if cap(f.ends) > 256 {
		f.ends = nil
	}
	f.b, f.ends = f.b[:0], f.ends[:0]
}

// date is the Date value of the current second, formatted once per
// second for every stream of every server.
var date atomic.Pointer[dateValue]

type dateValue struct {
	unix int64
	v    string
}

// Date is the Date field's value now (RFC 9110 5.6.7).
func Date() string {
	now := time.Now()
	if d := date.Load(); d != nil && d.unix == now.Unix() {
		return d.v
	}
	d := &dateValue{unix: now.Unix(), v: now.UTC().Format(http.TimeFormat)}
	date.Store(d)
	return d.v
}
