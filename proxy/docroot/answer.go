package docroot

import (
	"bytes"
	"log/slog"

	"github.com/valyala/fasthttp"
)

// redirect answers 301 to the directory with its trailing slash, keeping
// the query, as nginx does for a directory requested without one.
func redirect(req *fasthttp.Request, resp *fasthttp.Response, location string) {
	if q := req.URI().QueryString(); len(q) > 0 {
		location += "?" + string(q)
	}
	resp.SetStatusCode(fasthttp.StatusMovedPermanently)
	resp.Header.Set("Location", location)
	resp.Header.SetContentType("text/plain; charset=utf-8")
	resp.SetBodyString("Moved Permanently\n")
}

// refuse answers a path nothing may serve.
func refuse(resp *fasthttp.Response, k kind) {
	code := fasthttp.StatusNotFound
	switch k {
	case kindForbidden:
		code = fasthttp.StatusForbidden
	case kindBadPath:
		code = fasthttp.StatusBadRequest
	}
	resp.SetStatusCode(code)
	resp.Header.SetContentType("text/plain; charset=utf-8")
	resp.Header.Set("X-LiteSpeed-Cache-Control", "no-cache")
	resp.SetBodyString(fasthttp.StatusMessage(code) + "\n")
}

// stderrLog logs what a script wrote to FastCGI STDERR (PHP warnings),
// one entry per line; written by one request goroutine only.
type stderrLog struct {
	log    *slog.Logger
	script string
	buf    []byte
}

const maxStderrLine = 4096

func (s *stderrLog) Write(b []byte) (int, error) {
	s.buf = append(s.buf, b...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		s.emit(s.buf[:i])
		s.buf = s.buf[i+1:]
	}
	if len(s.buf) > maxStderrLine {
		s.flush()
	}
	return len(b), nil
}

func (s *stderrLog) flush() {
	s.emit(s.buf)
	s.buf = s.buf[:0]
}

func (s *stderrLog) emit(line []byte) {
	if line = bytes.TrimRight(line, "\r"); len(line) > 0 {
		s.log.Warn("php stderr", "script", s.script, "line", string(line))
	}
}
