package docroot

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/valyala/fasthttp"
)

// requestBody returns the request body for PHP with its length, whole:
// a body still arriving from the client is read to its end before a
// worker is taken — in memory up to MaxBodyInMemory, then in a temporary
// file — as nginx buffers client_body before it talks to FastCGI. A
// client trickling its body (or declaring more than it sends) so holds
// no worker, and PHP gets CONTENT_LENGTH for a chunked body too. The
// limit on the whole body is the stream's (the proxy's max_request_body:
// fasthttp.ErrBodyTooLarge). cleanup closes the spool.
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
	declared := int64(req.Header.ContentLength())
	if declared >= 0 {
		body = io.LimitReader(body, declared)
	}
	r, n, cleanup, err := h.spool(body)
	if err == nil && declared >= 0 && n != declared {
		cleanup()
		return nil, 0, nothing, fmt.Errorf("docroot: read request body: %d of %d bytes: %w", n, declared, io.ErrUnexpectedEOF)
	}
	return r, n, cleanup, err
}

// spool reads a body to its end: in memory up to MaxBodyInMemory, the
// rest after it in a temporary file, unlinked at once (nothing is left
// behind if ramjet dies).
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
	f, err := tempFile("ramjet-body-*")
	if err != nil {
		return nil, 0, nothing, fmt.Errorf("docroot: spool request body: %w", err)
	}
	cleanup := func() { _ = f.Close() } // unlinked, read only by us: nothing to lose
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

// tempFile creates an unlinked temporary file in os.TempDir (the unit's
// private /tmp): its space is freed when it is closed, whatever happens.
func tempFile(pattern string) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}
