package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// fhHandler answers from the page store as a fasthttp handler, doing no
// more than setting the page's headers and body.
type fhHandler struct {
	pages   *store
	headers [len(hitHeaders)][2][]byte // hitHeaders as bytes, converted once
}

func newFhHandler(pages *store) *fhHandler {
	h := &fhHandler{pages: pages}
	for i, kv := range hitHeaders {
		h.headers[i] = [2][]byte{[]byte(kv[0]), []byte(kv[1])}
	}
	return h
}

func (h *fhHandler) serve(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() {
		ctx.SetStatusCode(fasthttp.StatusMethodNotAllowed)
		ctx.SetConnectionClose()
		return
	}
	target := ctx.RequestURI()
	if len(target) == 0 || target[0] != '/' {
		ctx.SetStatusCode(fasthttp.StatusBadRequest)
		ctx.SetConnectionClose()
		return
	}
	p, err := h.pages.get(target)
	if err != nil {
		ctx.SetStatusCode(fasthttp.StatusBadGateway)
		return
	}
	rh := &ctx.Response.Header
	if p.contentType != "" {
		rh.SetContentType(p.contentType)
	}
	for _, kv := range h.headers {
		rh.SetCanonical(kv[0], kv[1])
	}
	ctx.Response.SetBodyRaw(p.body)
}

// serveFh answers ln's connections with fasthttp's Server, configured as
// ramjet's listener is, until ctx is done; it closes ln and waits for
// the connections to end before it returns.
func serveFh(ctx context.Context, ln net.Listener, pages *store) error {
	s := &fasthttp.Server{
		Handler:               newFhHandler(pages).serve,
		ReadTimeout:           60 * time.Second,
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		NoDefaultDate:         true,
		LazyRequestTime:       true,
		ReduceMemoryUsage:     true,
		StreamRequestBody:     true,
	}
	defer ln.Close()
	var shutdownErr error
	release := onStop(ctx, func() {
		shutdownErr = s.Shutdown()
		ln.Close() // Shutdown does nothing if Serve has not started yet
	})
	err := s.Serve(ln)
	release()
	if ctx.Err() != nil {
		err = nil // the listener closed under Serve, as asked
	}
	if err = errors.Join(err, shutdownErr); err != nil {
		return fmt.Errorf("fasthttp: %w", err)
	}
	return nil
}
