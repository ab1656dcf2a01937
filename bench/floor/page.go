package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// hitHeaders are what every answer says besides its type and length: a
// ramjet hit, so that the harness counts it as one. The Date is fixed:
// formatting the clock is a cost the floor leaves out.
var hitHeaders = [...][2]string{
	{"Server", "ramjet"},
	{"Date", "Sat, 05 Dec 2026 18:00:00 GMT"},
	{"Cache-Control", "max-age=3600"},
	{"Age", "1"},
	{"Cache-Status", "ramjet; hit"},
}

// sendfileMin is the smallest body sent from a file with FLOOR_SENDFILE,
// ramjet's disk tier's threshold.
const sendfileMin = 16 << 10

// fetchTimeout bounds one origin fetch, so that a stuck origin answers 502
// instead of holding a connection (or evl's whole loop) for ever.
const fetchTimeout = 30 * time.Second

// A page is one origin response, kept as the whole answer to send.
type page struct {
	contentType string
	wire        []byte // head then body, sent in one write
	head, body  []byte // wire's two parts
	// file holds the body again, for sendfile (fd), with FLOOR_SENDFILE
	// and a body of sendfileMin or more; nil otherwise.
	file *os.File
	fd   int
}

// A store fetches each path from the origin once and keeps its page.
// Failed fetches are not kept: the next request tries again.
type store struct {
	origin   string
	client   *http.Client
	sendfile bool

	mu       sync.RWMutex
	pages    map[string]*page
	fetching map[string]*fetch
}

// A fetch is one path's origin request under way; requests for the same
// path wait for it instead of asking the origin again.
type fetch struct {
	done chan struct{}
	page *page
	err  error
}

func newStore(origin string, sendfile bool) *store {
	return &store{
		origin:   origin,
		client:   &http.Client{Timeout: fetchTimeout},
		sendfile: sendfile,
		pages:    map[string]*page{},
		fetching: map[string]*fetch{},
	}
}

// get returns target's page, fetching it on the first request. The map is
// indexed with the bytes converted in place, which does not allocate.
func (s *store) get(target []byte) (*page, error) {
	s.mu.RLock()
	p := s.pages[string(target)]
	s.mu.RUnlock()
	if p != nil {
		return p, nil
	}
	return s.fetchOnce(string(target))
}

// fetchOnce fetches target unless another request already is, and waits
// for the one fetch either way.
func (s *store) fetchOnce(target string) (*page, error) {
	s.mu.Lock()
	if p := s.pages[target]; p != nil {
		s.mu.Unlock()
		return p, nil
	}
	f := s.fetching[target]
	if f != nil {
		s.mu.Unlock()
		<-f.done
		return f.page, f.err
	}
	f = &fetch{done: make(chan struct{})}
	s.fetching[target] = f
	s.mu.Unlock()

	f.page, f.err = s.fetch(target)
	if f.err != nil {
		log.Printf("floor: %v", f.err)
	}
	s.mu.Lock()
	delete(s.fetching, target)
	if f.err == nil {
		s.pages[target] = f.page
	}
	s.mu.Unlock()
	close(f.done)
	return f.page, f.err
}

// fetch asks the origin for target. Anything but a 200 is an error: the
// floor answers every page as a hit, and an error page is not one.
func (s *store) fetch(target string) (*page, error) {
	resp, err := s.client.Get(s.origin + target)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: origin answered %s", target, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: read body: %w", target, err)
	}
	p := newPage(resp.Header.Get("Content-Type"), body)
	if s.sendfile && len(body) >= sendfileMin {
		if p.file, err = bodyFile(body); err != nil {
			return nil, fmt.Errorf("fetch %s: %w", target, err)
		}
		p.fd = int(p.file.Fd())
	}
	return p, nil
}

// newPage lays out the answer to send for body.
func newPage(contentType string, body []byte) *page {
	wire := make([]byte, 0, 256+len(body))
	wire = append(wire, "HTTP/1.1 200 OK\r\n"...)
	for _, h := range hitHeaders {
		wire = append(append(append(append(wire, h[0]...), ": "...), h[1]...), "\r\n"...)
	}
	if contentType != "" {
		wire = append(append(append(wire, "Content-Type: "...), contentType...), "\r\n"...)
	}
	wire = append(wire, "Content-Length: "...)
	wire = strconv.AppendInt(wire, int64(len(body)), 10)
	wire = append(wire, "\r\n\r\n"...)
	h := len(wire)
	wire = append(wire, body...)
	return &page{contentType: contentType, wire: wire, head: wire[:h], body: wire[h:]}
}

// bodyFile writes body to a temporary file and unlinks it at once: the
// open descriptor keeps it for sendfile and nothing is left behind.
func bodyFile(body []byte) (*os.File, error) {
	f, err := os.CreateTemp("", "floor-*")
	if err != nil {
		return nil, fmt.Errorf("body file: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("body file: %w", err)
	}
	if _, err := f.Write(body); err != nil {
		f.Close()
		return nil, fmt.Errorf("body file: %w", err)
	}
	return f, nil
}

// close closes the pages' files and the idle origin connections; call it
// once nothing serves from the store.
func (s *store) close() error {
	s.client.CloseIdleConnections()
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, p := range s.pages {
		if p.file != nil {
			errs = append(errs, p.file.Close())
		}
	}
	return errors.Join(errs...)
}
