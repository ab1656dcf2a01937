package docroot

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/valyala/fasthttp"
)

// requestBody returns the request body for PHP with its length. PHP reads
// CONTENT_LENGTH bytes, so a body of unknown length (chunked) is read
// first: in memory up to MaxBodyInMemory, then spooled to a temporary
// file. cleanup removes the spool.
func (h *Handler) requestBody(req *fasthttp.Request) (io.Reader, int64, func(), error) {
	nothing := func() {}
	if !req.IsBodyStream() {
		b := req.Body()
		if len(b) == 0 {
			return nil, 0, nothing, nil
		}
		return bytes.NewReader(b), int64(len(b)), nothing, nil
	}
	body := req.BodyStream()
	if n := req.Header.ContentLength(); n >= 0 {
		return io.LimitReader(body, int64(n)), int64(n), nothing, nil
	}
	return h.spool(body)
}

// spool reads a body of unknown length to learn its length.
func (h *Handler) spool(body io.Reader) (io.Reader, int64, func(), error) {
	nothing := func() {}
	var mem bytes.Buffer
	n, err := io.Copy(&mem, io.LimitReader(body, h.cfg.MaxBodyInMemory+1))
	if err != nil {
		return nil, 0, nothing, fmt.Errorf("docroot: read request body: %w", err)
	}
	if n <= h.cfg.MaxBodyInMemory {
		return &mem, n, nothing, nil
	}
	f, err := os.CreateTemp("", "ramjet-body-*")
	if err != nil {
		return nil, 0, nothing, fmt.Errorf("docroot: spool request body: %w", err)
	}
	cleanup := func() {
		f.Close()
		os.Remove(f.Name())
	}
	if _, err := mem.WriteTo(f); err != nil {
		cleanup()
		return nil, 0, nothing, fmt.Errorf("docroot: spool request body: %w", err)
	}
	rest, err := io.Copy(f, body)
	if err != nil {
		cleanup()
		return nil, 0, nothing, fmt.Errorf("docroot: read request body: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		cleanup()
		return nil, 0, nothing, fmt.Errorf("docroot: spool request body: %w", err)
	}
	return f, n + rest, cleanup, nil
}
