package docroot

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

// smallFile is the size up to which a file is read into the response
// instead of streamed from the open file.
const smallFile = 64 << 10

// serveStatic answers GET and HEAD with the file, honouring validators
// and a single byte range, as nginx does. The file is opened and stat'ed
// here, so a cached lookup never serves stale sizes or validators.
func (h *Handler) serveStatic(req *fasthttp.Request, resp *fasthttp.Response, t *target) error {
	if !req.Header.IsGet() && !req.Header.IsHead() {
		resp.SetStatusCode(fasthttp.StatusMethodNotAllowed)
		resp.Header.Set("Allow", "GET, HEAD")
		resp.Header.Set("X-LiteSpeed-Cache-Control", "no-cache")
		return nil
	}
	f, info, err := h.openStatic(t.file)
	if err != nil {
		refuse(resp, kindNotFound)
		return nil
	}
	size, mod := info.Size(), info.ModTime()
	etag := fileETag(mod, size)
	resp.Header.Set("ETag", etag)
	resp.Header.Set("Last-Modified", mod.UTC().Format(http.TimeFormat))
	resp.Header.Set("Accept-Ranges", "bytes")
	resp.Header.SetContentType(contentType(t.file))
	h.setCacheControl(resp)
	if notModified(&req.Header, etag, mod) {
		f.Close()
		resp.SetStatusCode(fasthttp.StatusNotModified)
		resp.SkipBody = true
		return nil
	}
	start, n, code := byteRange(&req.Header, etag, mod, size)
	switch code {
	case fasthttp.StatusRequestedRangeNotSatisfiable:
		f.Close()
		resp.SetStatusCode(code)
		resp.Header.Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
		return nil
	case fasthttp.StatusPartialContent:
		resp.SetStatusCode(code)
		resp.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+n-1, size))
	}
	return writeFile(req, resp, f, start, n)
}

// openStatic opens a regular file (a target's, with symlinks resolved)
// and stats the open file. Unless the site follows symlinks anywhere, it
// is opened beneath the docroot: a directory on its way swapped for a
// symlink since the lookup cannot lead outside.
func (h *Handler) openStatic(name string) (*os.File, os.FileInfo, error) {
	var f *os.File
	var err error
	if h.cfg.FollowSymlinks {
		f, err = os.Open(name)
	} else {
		f, err = h.dir.open(h.relativeFile(name))
	}
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("docroot: %s is not a regular file", name)
	}
	return f, info, nil
}

// writeFile puts n bytes of f from start into resp: read whole when small,
// else streamed (fasthttp closes the file after sending it). It owns f.
func writeFile(req *fasthttp.Request, resp *fasthttp.Response, f *os.File, start, n int64) error {
	if req.Header.IsHead() {
		f.Close()
		resp.SkipBody = true
		resp.Header.SetContentLength(int(n))
		return nil
	}
	if start > 0 {
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			f.Close()
			return fmt.Errorf("docroot: seek %s: %w", f.Name(), err)
		}
	}
	if n > smallFile {
		resp.SetBodyStream(&fileBody{f: f, r: &io.LimitedReader{R: f, N: n}}, int(n))
		return nil
	}
	defer f.Close()
	// Into the response's own (pooled) buffer: the proxy takes it over
	// without a copy, which a SetBodyRaw body would forbid.
	resp.ResetBody()
	if _, err := io.CopyN(resp.BodyWriter(), f, n); err != nil {
		return fmt.Errorf("docroot: read %s: %w", f.Name(), err)
	}
	return nil
}

// fileBody streams part of an open file and closes it when done.
type fileBody struct {
	f *os.File
	r *io.LimitedReader // f from the range start, for the range length
}

func (b *fileBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *fileBody) Close() error               { return b.f.Close() }

// WriteTo gives the file itself to a writer that can take it: fasthttp's
// body writer passes a limited *os.File on to the connection, which on
// plain TCP sends it with sendfile, never copying it through user space.
func (b *fileBody) WriteTo(w io.Writer) (int64, error) {
	if rf, ok := w.(io.ReaderFrom); ok {
		return rf.ReadFrom(b.r)
	}
	return io.Copy(w, b.r)
}

// setCacheControl tells the proxy's cache (not the client: the header is
// internal) how long to keep a static file.
func (h *Handler) setCacheControl(resp *fasthttp.Response) {
	if h.cfg.StaticTTL <= 0 {
		resp.Header.Set("X-LiteSpeed-Cache-Control", "no-cache")
		return
	}
	resp.Header.Set("X-LiteSpeed-Cache-Control", "public,max-age="+strconv.FormatInt(int64(h.cfg.StaticTTL/time.Second), 10))
}

// fileETag is nginx's: hex mtime and size.
func fileETag(mod time.Time, size int64) string {
	return `"` + strconv.FormatInt(mod.Unix(), 16) + "-" + strconv.FormatInt(size, 16) + `"`
}

// contentType is the media type by extension; unknown ones are octet-stream.
func contentType(name string) string {
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}
