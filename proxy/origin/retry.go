package origin

import (
	"errors"
	"net"

	"github.com/valyala/fasthttp"
)

// An origin may close an idle keep-alive connection at the moment ramjet
// takes it from the pool for a request (its keep-alive timeout, a
// restart, a limit of requests per connection): the request then fails
// before any byte of an answer comes. Like nginx (a cached connection's
// failure costs no try), Varnish (one retry when a recycled connection
// fails) and Go's Transport (a reused connection's failure before the
// answer is retried), the pool sends such a request once more, on a
// connection dialed for it: fasthttp's own retry would take the next
// pooled connection, which has often been idle as long and is as dead.

// noRetry keeps fasthttp from retrying: Pool.send decides, and only it
// can tell a reused connection from a fresh one.
func noRetry(*fasthttp.Request, int, error) (resetTimeout, retry bool) { return false, false }

// send sends req on one of s's pooled connections and, when that was a
// reused connection the origin had closed, once more on a new one.
func (p *Pool) send(s *server, req *fasthttp.Request, resp *fasthttp.Response, replay bool) error {
	err := s.hc.Do(req, resp)
	if err == nil || !replay || !closedIdle(resp, err) {
		return err
	}
	if p.cfg.Retried != nil {
		p.cfg.Retried()
	}
	return s.doFresh(req, resp)
}

// doFresh sends req on a connection dialed for it. Connection: close
// keeps that connection out of any pool, so a later retry dials again.
func (s *server) doFresh(req *fasthttp.Request, resp *fasthttp.Response) error {
	if req.ConnectionClose() {
		return s.fresh.Do(req, resp)
	}
	req.SetConnectionClose()
	err := s.fresh.Do(req, resp)
	req.Header.ResetConnectionClose()
	return err
}

// replayable reports whether req may be sent twice: its method is
// idempotent (RFC 9110 9.2.2; never POST or PATCH) and its body can be
// sent again. A streamed body is read as it is sent, so only an empty
// one can; call it before the first attempt.
func replayable(req *fasthttp.Request) bool {
	h := &req.Header
	if !h.IsGet() && !h.IsHead() && !h.IsOptions() && !h.IsPut() && !h.IsDelete() {
		return false
	}
	return !req.IsBodyStream() || h.ContentLength() == 0
}

// closedIdle reports whether a request failed the way a reused
// connection fails when the origin closed it: nothing of the answer came
// (an EOF or reset reading it, a reset writing the request) and the
// connection had answered before. A timeout is no such failure, and a
// retry would double the wait.
func closedIdle(resp *fasthttp.Response, err error) bool {
	a, ok := resp.LocalAddr().(*connAddr)
	return ok && a.reused && !a.conn.heard && !timedOut(err)
}

func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, fasthttp.ErrTimeout) || errors.As(err, &ne) && ne.Timeout()
}
