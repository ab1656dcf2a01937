package adoption

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// ShadowPaths are fetched for every site besides its home page: files
// most sites have and a page none has (its 404 must match too).
var ShadowPaths = []string{"/", "/robots.txt", "/favicon.ico", "/ramjet-adopt-shadow-check-404"}

// compared are the response fields that must agree; the others (Date,
// Age, Cache-Status, Server, keep-alive, lengths of a differently framed
// body) are the cache's and the connection's.
var compared = []string{"Content-Type", "Location", "Content-Encoding", "Set-Cookie"}

// Diff is one site whose answers through ramjet differ from the web
// server's.
type Diff struct {
	Site string
	What []string
}

func (d Diff) String() string {
	return d.Site + ": " + strings.Join(d.What, "; ")
}

// Shadow fetches each site's pages through ramjet (a preview serving the
// plan's configuration) and from the web server, over plain HTTP where
// the site is served plain and over TLS where it is served over TLS,
// and compares them.
type Shadow struct {
	Preview    string // host:port of the preview's plain listener
	PreviewTLS string // and of its TLS listener; "" when the plan has none
	Plan       *Plan
	Paths      []string
}

// Compare returns the sites that differ, in plan order.
func (s *Shadow) Compare(ctx context.Context) []Diff {
	var diffs []Diff
	for i := range s.Plan.Hosts {
		h := &s.Plan.Hosts[i]
		if h.Excluded {
			continue
		}
		var what []string
		for _, scheme := range s.schemes(h) {
			preview, direct := s.Preview, dialable(s.Plan.Listen)
			if scheme == "https" {
				preview, direct = s.PreviewTLS, dialable(s.Plan.TLSListen)
			}
			for _, p := range s.Paths {
				a, aerr := fetch(ctx, scheme, preview, h.Names[0], p)
				if aerr == nil && scheme == "http" && s.PreviewTLS != "" {
					// ramjet's https redirect names its TLS port when it
					// is not 443, the preview's here; the web server's
					// "https://$host…" names none.
					a.header.Set("Location", strings.Replace(a.header.Get("Location"), h.Names[0]+":"+port(s.PreviewTLS)+"/", h.Names[0]+"/", 1))
				}
				b, berr := fetch(ctx, scheme, direct, h.Names[0], p)
				if d := compare(scheme+"://"+h.Names[0]+p, a, aerr, b, berr); d != "" {
					what = append(what, d)
				}
			}
		}
		if len(what) > 0 {
			diffs = append(diffs, Diff{Site: h.Names[0], What: what})
		}
	}
	return diffs
}

// schemes are those host h is served with on the addresses ramjet takes.
func (s *Shadow) schemes(h *Host) []string {
	var plain, tls bool
	for _, i := range h.Sites {
		for _, l := range s.Plan.Sites[i].Listens {
			plain = plain || !l.TLS && l.Addr == s.Plan.Listen
			tls = tls || l.TLS && l.Addr == s.Plan.TLSListen && s.PreviewTLS != ""
		}
	}
	var out []string
	if plain {
		out = append(out, "http")
	}
	if tls {
		out = append(out, "https")
	}
	return out
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// dialable turns ":80" into "127.0.0.1:80".
func dialable(addr string) string {
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func fetch(ctx context.Context, scheme, addr, host, path string) (*answer, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		},
		// The web server's own certificate, compared with itself: the
		// check is of the answers, not of the certificate chain.
		TLSClientConfig:    &tls.Config{ServerName: host, InsecureSkipVerify: true}, //nolint:gosec // see above
		DisableCompression: true,
		DisableKeepAlives:  true,
	}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+host+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	return &answer{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// compare says how the answer through ramjet (a) differs from the web
// server's (b), or "".
func compare(path string, a *answer, aerr error, b *answer, berr error) string {
	switch {
	case aerr != nil && berr != nil:
		return ""
	case aerr != nil:
		return fmt.Sprintf("%s: through ramjet: %v", path, aerr)
	case berr != nil:
		return fmt.Sprintf("%s: from the web server: %v", path, berr)
	case a.status != b.status:
		return fmt.Sprintf("%s: status %d through ramjet, %d from the web server", path, a.status, b.status)
	case a.status/100 == 3:
		// A redirect's body and type are the server's boilerplate.
		if al, bl := a.header.Get("Location"), b.header.Get("Location"); al != bl {
			return fmt.Sprintf("%s: Location %q through ramjet, %q from the web server", path, al, bl)
		}
		return ""
	}
	for _, k := range compared {
		if av, bv := strings.Join(a.header.Values(k), ", "), strings.Join(b.header.Values(k), ", "); av != bv {
			return fmt.Sprintf("%s: %s %q through ramjet, %q from the web server", path, k, av, bv)
		}
	}
	if !bytes.Equal(a.body, b.body) {
		return fmt.Sprintf("%s: bodies differ (%d bytes through ramjet, %d from the web server)", path, len(a.body), len(b.body))
	}
	return ""
}
