package top

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Snapshot is what the admin API said at one moment.
type Snapshot struct {
	At    time.Time
	Sites []Site
	Pools []Pool
	// Conns are the open client connections of every listener, Parked
	// those of them idle and parked.
	Conns, Parked int64
}

// Site is one site's counters since start and over the last minute.
type Site struct {
	Name           string
	Totals, Minute Counts
}

// Counts are the counters of GET /stats the view shows.
type Counts struct {
	Requests      uint64  `json:"requests"`
	Hits          uint64  `json:"hits"`
	HitRatio      float64 `json:"hit_ratio"`
	Errors        uint64  `json:"errors"`
	WAFBlocked    uint64  `json:"waf_blocked"`
	Origin        uint64  `json:"origin_requests"`
	OriginSeconds float64 `json:"origin_seconds"`
}

// Pool is one PHP pool's workers by state, and its queue.
type Pool struct {
	Name                          string
	Busy, Idle, Suspended, Queued int
}

// Source reads snapshots from a node's admin listener.
type Source struct {
	// Admin is the listener's base URL, Token the operator's token ("":
	// none).
	Admin, Token string
	Client       *http.Client
}

// Fetch reads a snapshot.
func (s *Source) Fetch(ctx context.Context) (Snapshot, error) {
	snap := Snapshot{At: time.Now()}
	var stats struct {
		Sites []struct {
			Site           string
			Totals, Minute Counts
		}
	}
	if err := s.getJSON(ctx, "/stats?urls=0", &stats); err != nil {
		return snap, err
	}
	for _, st := range stats.Sites {
		snap.Sites = append(snap.Sites, Site{Name: st.Site, Totals: st.Totals, Minute: st.Minute})
	}
	var php struct {
		Pools []struct {
			Name    string
			Queued  int
			Workers []struct{ State string }
		}
	}
	if err := s.getJSON(ctx, "/php/status", &php); err != nil {
		return snap, err
	}
	for _, p := range php.Pools {
		snap.Pools = append(snap.Pools, poolOf(p.Name, p.Queued, p.Workers))
	}
	body, err := s.get(ctx, "/metrics")
	if err != nil {
		return snap, err
	}
	defer body.Close()
	snap.Conns, snap.Parked, err = connections(body)
	return snap, err
}

func poolOf(name string, queued int, workers []struct{ State string }) Pool {
	p := Pool{Name: name, Queued: queued}
	for _, w := range workers {
		switch w.State {
		case "busy":
			p.Busy++
		case "idle":
			p.Idle++
		case "suspended":
			p.Suspended++
		}
	}
	return p
}

func (s *Source) getJSON(ctx context.Context, path string, v any) error {
	body, err := s.get(ctx, path)
	if err != nil {
		return err
	}
	defer body.Close()
	lr := &io.LimitedReader{R: body, N: maxJSON}
	if err := json.NewDecoder(lr).Decode(v); err != nil {
		if lr.N == 0 {
			return fmt.Errorf("top: GET %s: the answer is over %d MiB", path, maxJSON>>20)
		}
		return fmt.Errorf("top: GET %s: %w", path, err)
	}
	return nil
}

// maxJSON bounds an answer of the admin listener that top reads: a
// hostile one (a tenant's process on the port while ramjet restarts)
// must not fill top's memory. /stats?urls=0 takes about 1 KB a site: 8 MiB is some 8000 sites.
const maxJSON = 8 << 20

// get GETs path with the token; a status other than 200 is an error
// with the start of the body.
func (s *Source) get(ctx context.Context, path string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(s.Admin, "/")+path, nil)
	if err != nil {
		return nil, fmt.Errorf("top: %w", err)
	}
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("top: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200)) // for the message only
		resp.Body.Close()
		return nil, fmt.Errorf("top: GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(msg)))
	}
	return resp.Body, nil
}

// connections sums the ramjet_client_connections and
// ramjet_client_connections_parked gauges of every listener in
// Prometheus text.
func connections(r io.Reader) (open, parked int64, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, rest, _ := strings.Cut(sc.Text(), "{")
		var sum *int64
		switch name {
		case "ramjet_client_connections":
			sum = &open
		case "ramjet_client_connections_parked":
			sum = &parked
		default:
			continue
		}
		_, value, _ := strings.Cut(rest, "} ")
		v, perr := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if perr != nil {
			return open, parked, fmt.Errorf("top: /metrics line %q: %w", sc.Text(), perr)
		}
		*sum += int64(v)
	}
	if err := sc.Err(); err != nil {
		return open, parked, fmt.Errorf("top: /metrics: %w", err)
	}
	return open, parked, nil
}
