package proxy

import (
	"fmt"
	"strings"
)

// A generation's access log files are the Proxy's (accesslog.Files): a
// generation takes the writers of the paths its sites name when it is
// built, sharing those a running generation has open, and gives them
// back once every client request that started on it has written its
// line. A reload that names another path thus opens the new file before
// the swap and closes the old one after its last line.

// log gives s, when it logs, the writer of its path: the one another
// site of the generation took, or one from the Proxy's files.
func (b *builder) log(s *site) error {
	al := s.AccessLog
	if al.Path == "" {
		return nil
	}
	w, ok := b.logs[al.Path]
	if !ok {
		var err error
		if w, err = b.p.logs.Acquire(al.Path); err != nil {
			return fmt.Errorf("proxy: access log: %w", err)
		}
		b.logs[al.Path] = w
		b.g.logs = append(b.g.logs, w)
		b.g.logging = true
	}
	s.log = &siteLog{w: w, format: al.Format, name: logName(s)}
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
// change once built, so requests still on g may read it meanwhile.
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
