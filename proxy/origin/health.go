package origin

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"
)

// Start begins active health checks when a health path is configured.
// Close stops them and waits.
func (p *Pool) Start(ctx context.Context) {
	ctx, p.cancel = context.WithCancel(ctx)
	p.done = make(chan struct{})
	if p.cfg.Health.Path == "" {
		close(p.done)
		return
	}
	go p.checkLoop(ctx)
}

// Close stops health checks and waits for them. It is idempotent and safe
// to call without Start.
func (p *Pool) Close() error {
	p.closeOnce.Do(func() {
		if p.cancel != nil {
			p.cancel()
			<-p.done
		}
	})
	return nil
}

func (p *Pool) checkLoop(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.cfg.Health.Interval)
	defer t.Stop()
	for {
		p.checkAll()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *Pool) checkAll() {
	for _, s := range p.servers {
		ok := p.probe(s)
		h := p.cfg.Health
		switch {
		case ok && s.down.Load():
			if int(s.oks.Add(1)) >= h.Rise {
				s.down.Store(false)
				s.fails.Store(0)
				p.log.Info("origin back up", "server", s.addr)
			}
		case ok:
			s.fails.Store(0)
		case s.failed(h):
			p.log.Warn("origin marked down by health check", "server", s.addr)
		}
	}
}

// probe sends one GET for the health path; a 2xx or 3xx answer is healthy.
func (p *Pool) probe(s *server) bool {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + s.addr + p.cfg.Health.Path)
	req.Header.Set("User-Agent", "ramjet-health")
	resp.SkipBody = true
	req.SetTimeout(p.cfg.Health.Timeout)
	if err := p.send(s, req, resp, replayable(req)); err != nil {
		return false
	}
	_ = resp.CloseBodyStream() // nothing to report: the probe only reads the status
	code := resp.StatusCode()
	return code >= 200 && code < 400
}
