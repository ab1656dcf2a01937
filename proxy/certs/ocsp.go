package certs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"golang.org/x/crypto/ocsp"
)

// OCSP timing. A response is refreshed halfway through its validity,
// never sooner than minRefresh; a failed fetch is retried with doubling
// backoff up to maxRetry; a response without NextUpdate is refreshed
// after noNextUpdate.
const (
	minRefresh    = time.Minute
	firstRetry    = time.Minute
	maxRetry      = time.Hour
	noNextUpdate  = time.Hour
	maxOCSPAnswer = 1 << 20
)

// ocspState is the OCSP loop's own bookkeeping for one entry.
type ocspState struct {
	due     time.Time
	backoff time.Duration
	expires time.Time // NextUpdate of the stapled response; zero when none
}

// ocspLoop keeps a fresh staple on every entry whose leaf names an OCSP
// server. Fetches run here, one at a time and each bounded by
// cfg.OCSPTimeout, so handshakes never wait for a responder.
func (s *Store) ocspLoop(ctx context.Context) {
	if s.cfg.DisableOCSP {
		return
	}
	state := make(map[*entry]*ocspState)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		}
		next := s.ocspRound(ctx, state, time.Now())
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(time.Until(next))
	}
}

// ocspRound refreshes the entries that are due and returns when the next
// one will be.
func (s *Store) ocspRound(ctx context.Context, state map[*entry]*ocspState, now time.Time) time.Time {
	t := s.cur.Load()
	live := make(map[*entry]bool)
	next := now.Add(maxRetry)
	t.each(func(e *entry) {
		if e == nil || !e.wantsOCSP() {
			return
		}
		live[e] = true
		st := state[e]
		if st == nil {
			st = &ocspState{due: now}
			state[e] = st
		}
		if !st.due.After(now) && ctx.Err() == nil {
			s.refreshOCSP(ctx, e, st, now)
		}
		if st.due.Before(next) {
			next = st.due
		}
	})
	for e := range state {
		if !live[e] {
			delete(state, e) // replaced by a reload
		}
	}
	return next
}

func (s *Store) refreshOCSP(ctx context.Context, e *entry, st *ocspState, now time.Time) {
	resp, der, err := s.fetchOCSP(ctx, e)
	if err == nil && resp.Status != ocsp.Good {
		err = fmt.Errorf("status %s", ocspStatus(resp.Status))
		st.expires = time.Time{}
		e.stapled.Store(nil) // never staple a revoked or unknown answer
	}
	if err != nil {
		if st.backoff == 0 {
			st.backoff = firstRetry
		} else {
			st.backoff = min(2*st.backoff, maxRetry)
		}
		st.due = now.Add(st.backoff)
		if !st.expires.IsZero() && !now.Before(st.expires) {
			st.expires = time.Time{}
			e.stapled.Store(nil) // the old staple has expired
		}
		if !st.expires.IsZero() && st.due.After(st.expires) {
			st.due = st.expires
		}
		s.log.Warn("ocsp: no fresh response", "cert", e.pair.CertFile, "responder", e.leaf.OCSPServer[0],
			"retry_in", st.due.Sub(now), "err", err)
		return
	}
	staple := *e.cert
	staple.OCSPStaple = der
	e.stapled.Store(&staple)
	st.backoff = 0
	st.expires = resp.NextUpdate
	st.due = nextRefresh(now, resp.ThisUpdate, resp.NextUpdate)
	s.log.Debug("ocsp: stapled", "cert", e.pair.CertFile, "next_update", resp.NextUpdate, "refresh_at", st.due)
}

// nextRefresh is when to fetch again after a good response: halfway
// through its validity, but not before now+minRefresh unless that would
// pass nextUpdate.
func nextRefresh(now, thisUpdate, nextUpdate time.Time) time.Time {
	if nextUpdate.IsZero() {
		return now.Add(noNextUpdate)
	}
	if thisUpdate.IsZero() || thisUpdate.After(now) {
		thisUpdate = now
	}
	due := thisUpdate.Add(nextUpdate.Sub(thisUpdate) / 2)
	if floor := now.Add(minRefresh); due.Before(floor) {
		due = floor
		if due.After(nextUpdate) {
			due = nextUpdate
		}
	}
	return due
}

func (s *Store) fetchOCSP(ctx context.Context, e *entry) (*ocsp.Response, []byte, error) {
	req, err := ocsp.CreateRequest(e.leaf, e.issuer, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("create request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.OCSPTimeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.leaf.OCSPServer[0], bytes.NewReader(req))
	if err != nil {
		return nil, nil, fmt.Errorf("responder URL: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/ocsp-request")
	hreq.Header.Set("Accept", "application/ocsp-response")
	hresp, err := s.client.Do(hreq)
	if err != nil {
		return nil, nil, err
	}
	defer hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("responder answered %s", hresp.Status)
	}
	der, err := io.ReadAll(io.LimitReader(hresp.Body, maxOCSPAnswer))
	if err != nil {
		return nil, nil, fmt.Errorf("read response: %w", err)
	}
	resp, err := ocsp.ParseResponseForCert(der, e.leaf, e.issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("parse response: %w", err)
	}
	return resp, der, nil
}

func ocspStatus(s int) string {
	switch s {
	case ocsp.Good:
		return "good"
	case ocsp.Revoked:
		return "revoked"
	default:
		return "unknown"
	}
}
