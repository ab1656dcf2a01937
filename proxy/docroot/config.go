package docroot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
)

// Config is one site's docroot.
type Config struct {
	// Root is the directory served; it must exist.
	Root string
	// PHPOnly sends only PHP scripts to the pool; every other request goes
	// to Fallback (the origin). Off, the docroot serves everything.
	PHPOnly bool
	// Index names tried, in order, for a request ending in "/". nil means
	// index.php, index.html.
	Index []string
	// FrontController is the script ("/index.php") that answers paths that
	// match no file or directory; "" answers them 404.
	FrontController string
	// PathInfo splits "/a.php/b/c" into the script /a.php and PATH_INFO /b/c.
	PathInfo bool
	// FollowSymlinks lets symlinks point outside Root.
	FollowSymlinks bool
	// StaticTTL is how long the cache keeps static files; 0 stores none.
	StaticTTL time.Duration
	// MaxBodyInMemory: a request body still arriving from the client is
	// read whole before a worker is taken (requestBody), in memory up to
	// this size and in a temporary file past it. 0 means 64 KiB, what
	// the server buffers itself (proxy.ServerConfig.BufferBody).
	MaxBodyInMemory int64
	// Htaccess reads the .htaccess files from Root down to each
	// requested directory, as Apache with AllowOverride All does
	// (package htaccess). Not with PHPOnly.
	Htaccess bool
	// HtaccessMemo is the table of remembered .htaccess evaluations the
	// process's sites share (htaccess.NewMemo); nil gives the site one
	// of its own.
	HtaccessMemo *htaccess.Memo
	// Log receives the .htaccess files' errors and warnings and the
	// requests they fail; nil discards them.
	Log *slog.Logger
	// ProxyOrigins are the origins (scheme://host[:port]) a .htaccess
	// RewriteRule [P] may send a request to, through the fallback
	// Upstream; a [P] to any other answers 502.
	ProxyOrigins []string
	// ServerVars are CGI variables every script of the site gets, as
	// nginx's fastcgi_param or Apache's SetEnv give them (the LiteSpeed
	// Cache plugin's X-LSCACHE, CRAWLER_USLEEP, ...). A client cannot
	// set one: its header fields become HTTP_* variables.
	ServerVars []phppool.Param
}

// PHP runs FastCGI requests (a phppool.Pool, adapted by the proxy): Begin
// sends one and returns its Output once the first of it arrived; params
// are not used once it returned.
type PHP interface {
	Begin(ctx context.Context, params []phppool.Param, stdin io.Reader, stderr io.Writer) (Output, error)
}

// Output is a script's output as its worker sends it (phppool.Response).
type Output interface {
	// Next returns the next piece, valid until the following call, and
	// io.EOF once the output is complete.
	Next() ([]byte, error)
	// Buffered is how much has arrived and not been returned yet.
	Buffered() int
	// Close abandons an output not read to its end.
	Close() error
}

// Upstream answers what the docroot does not serve in PHPOnly mode.
type Upstream interface {
	Do(req *fasthttp.Request, resp *fasthttp.Response) error
}

// Sentinels the proxy maps to a status.
var (
	// ErrNoPHP: a script was requested from a site without a PHP pool.
	ErrNoPHP = errors.New("docroot: no php pool for this site")
)

// Handler serves requests from one docroot.
type Handler struct {
	cfg      Config
	root     string   // absolute, cleaned
	realRoot string   // root with symlinks resolved
	dir      *rootDir // realRoot, opened for the life of the handler (Close)
	php      PHP
	fallback Upstream
	running  inflight // requests in Do and the PHP exchanges streaming their output
	lookups  lookups
	tree     *htaccess.Tree // nil: no .htaccess
	log      *slog.Logger
}

// New checks cfg. php may be nil (static files only); fallback is needed
// with PHPOnly.
func New(cfg Config, php PHP, fallback Upstream) (*Handler, error) {
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("docroot: %s: %w", cfg.Root, err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("docroot: %w", err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("docroot: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("docroot: %s is not a directory", cfg.Root)
	}
	if cfg.PHPOnly && (fallback == nil || php == nil) {
		return nil, errors.New("docroot: php-only mode needs a php pool and an origin")
	}
	if cfg.Index == nil {
		cfg.Index = []string{"index.php", "index.html"}
	}
	if cfg.MaxBodyInMemory <= 0 {
		cfg.MaxBodyInMemory = 64 << 10
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	dir, err := openRootDir(real, false)
	if err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, root: root, realRoot: real, dir: dir, php: php, fallback: fallback, log: cfg.Log}
	if cfg.Htaccess && !cfg.PHPOnly {
		hc := htaccess.Config{Root: real, Log: cfg.Log, Memo: cfg.HtaccessMemo}
		if !cfg.FollowSymlinks {
			hc.Open = dir.open
		}
		t, err := htaccess.NewTree(hc)
		if err != nil {
			_ = dir.close() // nothing was opened beneath it yet
			return nil, fmt.Errorf("docroot: %w", err)
		}
		h.tree = t
	}
	return h, nil
}

// Htaccess is the handler's .htaccess tree, nil when it reads none. The
// proxy evaluates it too, before its cache, for what decides caching
// and refusals; the handler evaluates it again for what it serves
// (remembered per request key, DoForKey).
func (h *Handler) Htaccess() *htaccess.Tree { return h.tree }

// Close waits until no request is inside Do and no PHP exchange is still
// streaming its output, or until ctx ends, then closes the docroot's
// directory: what still arrives after that finds no file (404). It owns
// no process, only the work it started and that directory. It may be
// called again.
func (h *Handler) Close(ctx context.Context) error {
	err := h.running.wait(ctx)
	return errors.Join(err, h.dir.close())
}

// Do answers req as the origin would: a static file, a PHP script, the
// front controller, or the fallback origin in PHPOnly mode.
func (h *Handler) Do(req *fasthttp.Request, resp *fasthttp.Response) error {
	return h.DoFor(nil, req, resp)
}

// DoFor is Do for a request whose client c can tell whether it is still
// there (nil: it cannot): a script that had to wait for a PHP worker is
// not run once its client went away (phppool.ErrClientGone).
func (h *Handler) DoFor(c phppool.Client, req *fasthttp.Request, resp *fasthttp.Response) error {
	return h.DoForKey(c, 0, req, resp)
}

// DoForKey is DoFor for a request whose key (0: none) hashes everything
// it was made from that its .htaccess evaluation may read — the
// proxy's hash of its client's request head and connection, and how it
// built req from them: requests with the same key share one evaluation
// for a StatInterval (htaccess.Tree.RecallServe) instead of running the
// rules again.
func (h *Handler) DoForKey(c phppool.Client, key uint64, req *fasthttp.Request, resp *fasthttp.Response) error {
	h.running.add()
	defer h.running.done()
	if h.tree != nil {
		return h.serveHtaccess(c, key, req, resp)
	}
	t := h.lookup(string(req.URI().Path()))
	switch t.kind {
	case kindFallback:
		req.Header.Del(HeaderRemotePort)
		req.Header.Del(HeaderServerAddr)
		return h.fallback.Do(req, resp)
	case kindPHP:
		return h.servePHP(c, req, resp, &t, nil)
	case kindStatic:
		return h.serveStatic(req, resp, &t)
	case kindRedirect:
		redirect(req, resp, t.location)
	default:
		refuse(resp, t.kind)
	}
	return nil
}

// Static reports whether a request for path is answered with a file of
// the docroot (not a script, the front controller or the origin): such a
// request never reaches PHP.
func (h *Handler) Static(path []byte) bool {
	return h.lookup(string(path)).kind == kindStatic
}
