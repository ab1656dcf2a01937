package proxy

import (
	"fmt"
	"strings"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
)

// A generation's access log files are the Proxy's (accesslog.Files): a
// generation takes the writers of the paths its sites name when it is
// built, sharing those a running generation has open, and gives them
// back once every client request that started on it has written its
// line. A reload that names another path thus opens the new file before
// the swap and closes the old one after its last line.

// usersRetired is subtracted from a generation's users when it is
// replaced: the count goes negative, which turns new requests to the
// current generation, and reaches -usersRetired when the last one left.
const usersRetired = 1 << 62

// openLogs gives every site of g that logs the writer of its path.
func (p *Proxy) openLogs(g *generation) error {
	byPath := map[string]*accesslog.Writer{}
	for _, s := range g.router.sites() {
		al := s.AccessLog
		if al.Path == "" {
			continue
		}
		w, ok := byPath[al.Path]
		if !ok {
			var err error
			if w, err = p.logs.Acquire(al.Path); err != nil {
				p.releaseLogs(g)
				return fmt.Errorf("proxy: access log: %w", err)
			}
			byPath[al.Path] = w
			g.logs = append(g.logs, w)
			g.logging = true
		}
		s.log = &siteLog{w: w, format: al.Format, name: logName(s)}
	}
	return nil
}

// logName is a site's first host name; nil for the default site.
func logName(s *site) []byte {
	if len(s.Names) == 0 {
		return nil
	}
	return []byte(strings.ToLower(s.Names[0]))
}

// releaseLogs gives back g's writers, once per generation; a writer no
// other generation uses is closed, its lines written. g.logs does not
// change after openLogs, so requests still on g may read it meanwhile.
func (p *Proxy) releaseLogs(g *generation) {
	for _, w := range g.logs {
		if err := p.logs.Release(w); err != nil {
			p.log.Warn("closing an access log", "path", w.Path(), "err", err)
		}
	}
}

// retireLogs gives back the writers of old, just replaced, once its last
// client request has left (or the proxy closes).
func (p *Proxy) retireLogs(old *generation) {
	if !old.logging {
		return
	}
	old.stopEntering()
	if !p.startBackground() {
		p.releaseLogs(old)
		return
	}
	go func() {
		defer p.bg.Done()
		select {
		case <-old.drained:
		case <-p.stop:
		}
		p.releaseLogs(old)
	}()
}

// ReopenLogs opens every access log file again at its path, for
// logrotate: lines from now on go to the file now there.
func (p *Proxy) ReopenLogs() error {
	if err := p.logs.Reopen(); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	return nil
}

// enter is the generation a client request starts on. While it logs,
// the request is counted, so that its files stay open until it left.
func (p *Proxy) enter() *generation {
	for {
		g := p.gen.Load()
		if !g.logging || g.users.Add(1) > 0 {
			return g
		}
		if p.gen.Load() == g {
			// Retired but still current: the proxy is closed, and a request
			// the listeners let through late keeps g (and the count, which
			// its leave gives back); its line is dropped and counted.
			return g
		}
		g.leave() // replaced meanwhile: start on the current one
	}
}

// leave ends a client request's use of g.
func (g *generation) leave() {
	if g.logging && g.users.Add(-1) == -usersRetired {
		g.drainedOnce.Do(func() { close(g.drained) })
	}
}

// stopEntering marks g replaced: new requests go to the current one, and
// drained closes when those on g have left.
func (g *generation) stopEntering() {
	if g.users.Add(-usersRetired) == -usersRetired {
		g.drainedOnce.Do(func() { close(g.drained) })
	}
}
