package origin

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// Interim is an interim (1xx) response the origin sent before its final
// one, such as 103 Early Hints: fasthttp's client reads and drops them,
// so the connection keeps them for the request (conn.go).
type Interim struct {
	Status int
	Fields [][2][]byte // name, value, as they came
}

// Interims are the interim responses that came before resp, in order; nil
// when none did. Valid after Pool.Do returned resp.
func Interims(resp *fasthttp.Response) []Interim {
	if a, ok := resp.LocalAddr().(*connAddr); ok {
		return a.interim
	}
	return nil
}

// parseInterim reads a header block (its lines, each ending in CRLF)
// that is an interim response: a status of 1xx but 101 (which ends
// HTTP/1.1 on the connection and is never passed on). ok is false for any
// other block, the final response's.
func parseInterim(block []byte) (im Interim, ok bool) {
	line, rest, _ := bytes.Cut(block, []byte("\r\n"))
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return Interim{}, false
	}
	code := line[9:12]
	if code[0] != '1' || code[1] < '0' || code[1] > '9' || code[2] < '0' || code[2] > '9' || string(code) == "101" {
		return Interim{}, false
	}
	im.Status = 100 + int(code[1]-'0')*10 + int(code[2]-'0')
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, found := bytes.Cut(line, []byte{':'})
		if !found || len(name) == 0 {
			continue
		}
		im.Fields = append(im.Fields, [2][]byte{bytes.Clone(name), bytes.Clone(bytes.TrimSpace(value))})
	}
	return im, true
}
