package purge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/netip"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"
)

// APIConfig configures the admin purge API.
type APIConfig struct {
	// Token is the bearer token. "" requires none, which the caller must
	// allow only on a loopback admin listener.
	Token string
	// Allow lists the client networks allowed to purge. Empty means
	// loopback only (127.0.0.0/8 and ::1).
	Allow []netip.Prefix
	// MaxBody limits the request body in bytes. 0 means 1 MiB.
	MaxBody int
	// Sites are the tokens that purge one site only.
	Sites []SiteToken
	// ScopeOf names the site a host belongs to (Command.Site); it must be
	// set with Sites. A site token's command is refused (403) when it
	// names a host of another site.
	ScopeOf func(host string) string
}

// Applier takes an accepted command: the hub applies it locally and fans
// it out. source names where it came from ("api") for metrics and logs.
type Applier interface {
	Apply(cmd Command, source string) Result
}

// API serves POST /purge on the admin listener.
type API struct {
	cfg   APIConfig
	apply Applier
}

// maxURLLen bounds one url or prefix; longer than any real request line.
const maxURLLen = 8 << 10

var loopback = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
}

// NewAPI returns the purge API handing commands to a.
func NewAPI(cfg APIConfig, a Applier) *API {
	if len(cfg.Allow) == 0 {
		cfg.Allow = loopback
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 1 << 20
	}
	return &API{cfg: cfg, apply: a}
}

// apiRequest is the JSON body, and what form and query fields fill.
type apiRequest struct {
	Tags     []string `json:"tags"`
	URLs     []string `json:"urls"`
	Prefixes []string `json:"prefixes"`
	All      bool     `json:"all"`
	Soft     bool     `json:"soft"`
	Host     string   `json:"host"`
}

// apiResponse is the answer to an accepted purge.
type apiResponse struct {
	Purged Result `json:"purged"`
	Soft   bool   `json:"soft"`
}

// ServePurge handles POST /purge: check the client, then the token, then
// the method (so an unauthenticated client learns nothing), parse one
// command and apply it.
func (a *API) ServePurge(ctx *fasthttp.RequestCtx) {
	site, ok := a.Caller(ctx)
	if !ok {
		return
	}
	if !ctx.IsPost() {
		ctx.Response.Header.Set("Allow", "POST")
		writeError(ctx, fasthttp.StatusMethodNotAllowed, "method not allowed, use POST")
		return
	}
	if len(ctx.PostBody()) > a.cfg.MaxBody {
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", a.cfg.MaxBody))
		return
	}
	req, status, err := readRequest(ctx)
	if err == nil {
		status = fasthttp.StatusBadRequest
		err = req.validate()
	}
	if err != nil {
		writeError(ctx, status, err.Error())
		return
	}
	cmd := req.command()
	if site != "" {
		if err := a.withinSite(&cmd, site); err != nil {
			writeError(ctx, fasthttp.StatusForbidden, err.Error())
			return
		}
	}
	res := a.apply.Apply(cmd, "api")
	writeJSON(ctx, fasthttp.StatusOK, apiResponse{Purged: res, Soft: req.Soft})
}

// allowed checks the peer address itself: the admin listener is not
// behind a proxy, so forwarding headers are not trusted.
func (a *API) allowed(ctx *fasthttp.RequestCtx) bool {
	ip, ok := netip.AddrFromSlice(ctx.RemoteIP())
	if !ok {
		return false
	}
	ip = ip.Unmap()
	for _, p := range a.cfg.Allow {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// authorized compares "Authorization: Bearer TOKEN" in constant time
// with the operator's token (site "": every site) and the site tokens,
// and reports the site the token may purge.
func (a *API) authorized(ctx *fasthttp.RequestCtx) (site string, ok bool) {
	who, site := Tokens{Operator: a.cfg.Token, Sites: a.cfg.Sites}.Identify(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
	switch who {
	case BearerSite:
		return site, true
	case BearerOperator:
		return "", true
	}
	return "", a.cfg.Token == ""
}

// withinSite scopes a site token's command to its site, refusing one
// that names another site's host (in host or an absolute URL).
func (a *API) withinSite(cmd *Command, site string) error {
	cmd.Site = site
	hosts := []string{cmd.Host}
	for _, t := range cmd.Targets {
		if t.Kind == KindURL || t.Kind == KindPrefix {
			hosts = append(hosts, hostOf(t.Value))
		}
	}
	for _, h := range hosts {
		if h != "" && a.cfg.ScopeOf(h) != site {
			return fmt.Errorf("%s is not a host of this token's site", h)
		}
	}
	return nil
}

// hostOf is the host of an absolute http(s) URL, "" for a path.
func hostOf(raw string) string {
	for _, scheme := range []string{"http://", "https://"} {
		if rest, ok := strings.CutPrefix(raw, scheme); ok {
			h, _, _ := strings.Cut(rest, "/")
			return h
		}
	}
	return ""
}

// readRequest reads the JSON body or the form and query fields.
func readRequest(ctx *fasthttp.RequestCtx) (apiRequest, int, error) {
	ct := string(ctx.Request.Header.ContentType())
	mt := ""
	if ct != "" {
		var err error
		if mt, _, err = mime.ParseMediaType(ct); err != nil {
			return apiRequest{}, fasthttp.StatusUnsupportedMediaType, fmt.Errorf("content type %q: %w", ct, err)
		}
	}
	switch mt {
	case "application/json":
		if ctx.QueryArgs().Len() > 0 {
			return apiRequest{}, fasthttp.StatusBadRequest, errors.New("use either a JSON body or form/query fields, not both")
		}
		r, err := decodeJSON(ctx.PostBody())
		return r, fasthttp.StatusBadRequest, err
	case "", "application/x-www-form-urlencoded", "multipart/form-data":
		r, err := readForm(ctx, mt)
		return r, fasthttp.StatusBadRequest, err
	default:
		return apiRequest{}, fasthttp.StatusUnsupportedMediaType, fmt.Errorf("content type %q: want JSON or a form", mt)
	}
}

// decodeJSON decodes strictly: unknown fields and trailing data are
// errors, so a typo ("tag" for "tags") is not a silent no-op.
func decodeJSON(body []byte) (apiRequest, error) {
	var r apiRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("json body: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return r, errors.New("json body: data after the object")
	}
	return r, nil
}

// readForm merges query and form fields. Unknown fields are errors, so
// "sfot=1" does not silently become a hard purge.
func readForm(ctx *fasthttp.RequestCtx, mt string) (apiRequest, error) {
	var r apiRequest
	var errs []error
	add := func(k, v string) {
		if err := r.set(k, v); err != nil {
			errs = append(errs, err)
		}
	}
	ctx.QueryArgs().VisitAll(func(k, v []byte) { add(string(k), string(v)) })
	if mt == "multipart/form-data" {
		f, err := ctx.MultipartForm()
		if err != nil {
			return r, fmt.Errorf("multipart body: %w", err)
		}
		for k, vs := range f.Value {
			for _, v := range vs {
				add(k, v)
			}
		}
		if len(f.File) > 0 {
			errs = append(errs, errors.New("file fields are not accepted"))
		}
	} else {
		ctx.PostArgs().VisitAll(func(k, v []byte) { add(string(k), string(v)) })
	}
	return r, errors.Join(errs...)
}

// set applies one form field.
func (r *apiRequest) set(k, v string) error {
	var err error
	switch k {
	case "tag":
		r.Tags = append(r.Tags, v)
	case "url":
		r.URLs = append(r.URLs, v)
	case "prefix":
		r.Prefixes = append(r.Prefixes, v)
	case "host":
		r.Host = v
	case "all":
		r.All, err = formBool(k, v)
	case "soft":
		r.Soft, err = formBool(k, v)
	default:
		err = fmt.Errorf("unknown field %q", k)
	}
	return err
}

func formBool(k, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, nil
	case "", "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("field %s: %q is not a boolean", k, v)
}

// validate checks every target and joins every problem.
func (r *apiRequest) validate() error {
	n := len(r.Tags) + len(r.URLs) + len(r.Prefixes)
	if n == 0 && !r.All {
		return errors.New("nothing to purge: give tag, url, prefix or all")
	}
	if n > maxTargets {
		return fmt.Errorf("%d targets, at most %d per request", n, maxTargets)
	}
	var errs []error
	for _, t := range r.Tags {
		if t == "" || len(t) > maxItemLen || hasControl([]byte(t)) {
			errs = append(errs, fmt.Errorf("tag %q: must be 1 to %d bytes without control characters", clip([]byte(t)), maxItemLen))
		}
	}
	for i, u := range r.URLs {
		r.URLs[i], errs = checkURL("url", u, errs)
	}
	for i, u := range r.Prefixes {
		r.Prefixes[i], errs = checkURL("prefix", u, errs)
	}
	if strings.ContainsAny(r.Host, "/ ") || hasControl([]byte(r.Host)) {
		errs = append(errs, fmt.Errorf("host %q: want a host name, optionally with a port", clip([]byte(r.Host))))
	}
	return errors.Join(errs...)
}

// checkURL accepts a path ("/a?b") or an absolute http(s) URL, whose
// scheme it lower-cases because the cache matches "http://" exactly.
func checkURL(field, u string, errs []error) (string, []error) {
	bad := func(why string) (string, []error) {
		return u, append(errs, fmt.Errorf("%s %q: %s", field, clip([]byte(u)), why))
	}
	if len(u) > maxURLLen || hasControl([]byte(u)) {
		return bad(fmt.Sprintf("must be at most %d bytes without control characters", maxURLLen))
	}
	if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
		return u, errs
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil {
		return bad(`must be an absolute http(s) URL or a path starting with "/"`)
	}
	scheme, rest, _ := strings.Cut(u, ":")
	return strings.ToLower(scheme) + ":" + rest, errs
}

// command turns the request into one Command; soft applies to every
// target.
func (r *apiRequest) command() Command {
	cmd := Command{Host: r.Host}
	add := func(k Kind, vs []string) {
		for _, v := range vs {
			cmd.Targets = append(cmd.Targets, Target{Kind: k, Value: v, Soft: r.Soft})
		}
	}
	add(KindTag, r.Tags)
	add(KindURL, r.URLs)
	add(KindPrefix, r.Prefixes)
	if r.All {
		cmd.Targets = append(cmd.Targets, Target{Kind: KindAll, Soft: r.Soft})
	}
	return cmd
}

func writeError(ctx *fasthttp.RequestCtx, status int, msg string) {
	writeJSON(ctx, status, struct {
		Error string `json:"error"`
	}{msg})
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil { // only plain structs of strings, ints and bools reach here
		panic(fmt.Sprintf("purge: marshal response: %v", err))
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(append(body, '\n'))
}
