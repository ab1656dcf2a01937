package purge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ClientConfig says where the admin purge API is.
type ClientConfig struct {
	// Admin is the admin listener's base URL, e.g. http://127.0.0.1:9090.
	Admin string
	// Token is sent as "Authorization: Bearer TOKEN"; "" sends none.
	Token string
	// Timeout bounds the whole call. 0 means 10 s.
	Timeout time.Duration
}

// Request is one purge to send: every target in one command.
type Request struct {
	Tags     []string
	URLs     []string
	Prefixes []string
	All      bool
	Soft     bool
	// Host resolves path-only URLs and prefixes; "" means every host.
	Host string
}

// StatusError is a purge the server refused: its HTTP status and the
// message from its JSON error body.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("purge: server answered %d %s: %s", e.Code, http.StatusText(e.Code), e.Message)
}

// client does not follow redirects: a redirected POST turns into a GET
// without its body, which would report a purge that never happened.
var client = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// maxAnswer bounds what the client reads back; answers are tiny.
const maxAnswer = 1 << 20

// Send posts r as JSON to cfg.Admin + "/purge" and returns what the server
// purged. A refusal is a *StatusError.
func Send(ctx context.Context, cfg ClientConfig, r Request) (Result, error) {
	endpoint, err := purgeURL(cfg.Admin)
	if err != nil {
		return Result{}, err
	}
	// Request and apiRequest have the same fields, so the wire format is
	// defined once, by the API's JSON tags.
	body, err := json.Marshal(apiRequest(r))
	if err != nil {
		return Result{}, fmt.Errorf("purge: encode request: %w", err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("purge: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.Token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Result{}, fmt.Errorf("purge: post %s: %w", endpoint, err)
	}
	defer resp.Body.Close() // read-only body: a close error changes nothing
	return readAnswer(resp)
}

// purgeURL checks the admin base URL and appends "/purge".
func purgeURL(admin string) (string, error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", fmt.Errorf("purge: admin URL %q: %w", admin, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("purge: admin URL %q: want http://host:port", admin)
	}
	return u.JoinPath("purge").String(), nil
}

// readAnswer decodes the success body or turns the error body into a
// *StatusError.
func readAnswer(resp *http.Response) (Result, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return Result{}, fmt.Errorf("purge: read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(data)) // not our API: show what it said
		}
		return Result{}, &StatusError{Code: resp.StatusCode, Message: e.Error}
	}
	var a apiResponse
	if err := json.Unmarshal(data, &a); err != nil {
		return Result{}, fmt.Errorf("purge: decode answer: %w", err)
	}
	return a.Purged, nil
}

var _ error = (*StatusError)(nil)
