package main_test

// RFC 9111 conformance through the built binary, measured the way the
// public HTTP caching test suite (github.com/http-tests/cache-tests)
// measures a cache: one ramjet, with grace 0s and default_ttl 0s so that
// only the responses' own headers decide, in front of an origin of this
// test's own that answers each request exactly as a case prescribes and
// records what it got. The cases (e2e_rfc9111_cases_test.go) restate in
// this project's words every required check of that suite that applies to
// a shared cache; none of the suite's code is used.
//
// testdata/rfc9111_passing.txt lists the cases that pass: one of them
// that fails fails its subtest, and the test ends with the list of these
// regressions. Any other failing case is only logged, so that the ones
// still failing do not hide a regression while they are being fixed. The
// end of the log says how many pass, which fail, and which pass without
// being listed yet.
//
// Run the table alone (-rfc.strict makes every failing case fail its
// subtest, for working on one; -rfc.update, on a full run, rewrites the
// list from the cases that passed):
//
//	go test -race -count=1 -run TestRFC9111Conformance -v ./cmd/ramjet
//	go test -count=1 -run 'TestRFC9111Conformance/update304' -v ./cmd/ramjet -args -rfc.strict
//	go test -count=1 -run TestRFC9111Conformance ./cmd/ramjet -args -rfc.update

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// rfcPassingFile lists, one id a line, the cases that pass against this
// branch's binary and must keep passing; lines starting with # are
// comments. Add a case with the fix that makes it pass. The goal (issue
// 14): at least 150 of the suite's 160 required checks for every cache
// right and at most 3 wrong (Varnish gets 119, nginx proxy_cache 100,
// Caddy and Apache about 147), and the 10 of RFC 9213 CDN-Cache-Control
// too.
const rfcPassingFile = "testdata/rfc9111_passing.txt"

var (
	rfcStrict  = flag.Bool("rfc.strict", false, "TestRFC9111Conformance: every failing case fails its subtest, listed as passing or not")
	rfcRewrite = flag.Bool("rfc.update", false, "TestRFC9111Conformance: rewrite "+rfcPassingFile+" from the cases that pass (a full run only)")
)

// rfcConfig makes RFC semantics what is measured: no grace beyond what a
// response allows, nothing stored without freshness information.
const rfcConfig = "defaults:\n  grace: 0s\n  default_ttl: 0s\n"

func TestRFC9111Conformance(t *testing.T) {
	t.Parallel()
	groups := rfcGroups()
	listed := readRFCPassing(t, groups)
	o := startRFCOrigin(t, groups)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", rfcConfig))
	rn := &rfcRunner{base: rj.URL, origin: o, client: newClient(t), slots: make(chan struct{}, 8)}

	// Every case starts at once, before the subtests, so that their pauses
	// (a lifetime of one second running out) overlap whatever -parallel
	// is; the subtests, one per case grouped by the suite's file, report.
	// -run may select some of them; all run, and all are waited for.
	var running sync.WaitGroup
	defer running.Wait()
	done := map[string]chan rfcOutcome{}
	all := 0
	for _, g := range groups {
		for _, c := range g.cases {
			all++
			if c.deliberate != "" {
				continue
			}
			ch := make(chan rfcOutcome, 1)
			done[c.id] = ch
			running.Add(1)
			go func() {
				defer running.Done()
				ch <- rn.run(c)
			}()
		}
	}
	tally := rfcTally{all: all, listed: listed}
	for _, g := range groups {
		t.Run(g.file, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					if c.deliberate != "" {
						tally.deliberate = append(tally.deliberate, c.id)
						t.Skipf("%s: deliberate difference: %s", c.id, c.deliberate)
					}
					out := <-done[c.id]
					tally.add(g.file, c, out)
					switch {
					case !out.ok && listed[c.id]:
						t.Errorf("%s passed before (%s lists it) and fails now: %s", c.id, rfcPassingFile, out.why)
					case !out.ok && *rfcStrict:
						t.Errorf("%s: %s", c.id, out.why)
					case !out.ok:
						t.Logf("FAIL %s: %s", c.id, out.why)
					}
				})
			}
		})
	}
	tally.report(t)
}

// readRFCPassing reads rfcPassingFile; an id there that is no case of
// groups fails the test (a case renamed or dropped from the table).
func readRFCPassing(t *testing.T, groups []rfcGroup) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(rfcPassingFile)
	if err != nil {
		t.Fatalf("the list of cases that must pass: %v", err)
	}
	known := map[string]bool{}
	for _, g := range groups {
		for _, c := range g.cases {
			known[c.id] = true
		}
	}
	listed := map[string]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		id := strings.TrimSpace(line)
		switch {
		case id == "" || strings.HasPrefix(id, "#"):
			continue
		case !known[id]:
			t.Errorf("%s:%d: %q is no case of the table", rfcPassingFile, i+1, id)
		}
		listed[id] = true
	}
	return listed
}

// rfcTally counts the outcomes; the subtests run one after another.
type rfcTally struct {
	all           int      // cases in the table
	total, passed int      // of those run and not deliberate
	failed        []string // "id (name): why"
	deliberate    []string
	listed        map[string]bool // rfcPassingFile
	regressed     []string        // listed cases that fail
	unlisted      []string        // cases that pass but are not listed
	passing       []string        // in the table's order, for -rfc.update
	files         []rfcFileTally
}

// rfcFileTally counts one of the suite's files.
type rfcFileTally struct {
	file        string
	passed, ran int
}

func (tl *rfcTally) add(file string, c rfcCase, out rfcOutcome) {
	tl.total++
	if n := len(tl.files); n == 0 || tl.files[n-1].file != file {
		tl.files = append(tl.files, rfcFileTally{file: file})
	}
	f := &tl.files[len(tl.files)-1]
	f.ran++
	switch {
	case out.ok:
		f.passed++
		tl.passed++
		tl.passing = append(tl.passing, c.id)
		if !tl.listed[c.id] {
			tl.unlisted = append(tl.unlisted, c.id)
		}
	default:
		tl.failed = append(tl.failed, fmt.Sprintf("%s (%s): %s", c.id, c.name, out.why))
		if tl.listed[c.id] {
			tl.regressed = append(tl.regressed, c.id)
		}
	}
}

func (tl *rfcTally) report(t *testing.T) {
	t.Helper()
	t.Logf("%d of %d required checks pass, %d fail", tl.passed, tl.total, len(tl.failed))
	var files []string
	for _, f := range tl.files {
		files = append(files, fmt.Sprintf("%s %d/%d", f.file, f.passed, f.ran))
	}
	t.Logf("passing by the suite's file: %s", strings.Join(files, ", "))
	if len(tl.deliberate) > 0 {
		t.Logf("skipped as deliberate differences: %s", strings.Join(tl.deliberate, ", "))
	}
	for _, f := range tl.failed {
		t.Logf("failing: %s", f)
	}
	if len(tl.unlisted) > 0 {
		t.Logf("passing, not yet in %s (add them, or run with -rfc.update): %s", rfcPassingFile, strings.Join(tl.unlisted, ", "))
	}
	if len(tl.regressed) > 0 {
		t.Errorf("%d cases that passed before (%s) fail now: %s", len(tl.regressed), rfcPassingFile, strings.Join(tl.regressed, ", "))
	}
	full := tl.total+len(tl.deliberate) == tl.all
	switch {
	case *rfcRewrite && !full:
		t.Errorf("-rfc.update needs every case to run: %d of %d ran (-run)", tl.total+len(tl.deliberate), tl.all)
	case *rfcRewrite:
		tl.writePassing(t)
	}
}

// writePassing rewrites rfcPassingFile with the cases that passed, below
// the file's comment lines.
func (tl *rfcTally) writePassing(t *testing.T) {
	t.Helper()
	old, err := os.ReadFile(rfcPassingFile)
	if err != nil {
		t.Fatalf("-rfc.update: %v", err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(old), "\n") {
		if strings.HasPrefix(line, "#") {
			b.WriteString(line + "\n")
		}
	}
	for _, id := range tl.passing {
		b.WriteString(id + "\n")
	}
	if err := os.WriteFile(rfcPassingFile, []byte(b.String()), 0o644); err != nil {
		t.Fatalf("-rfc.update: %v", err)
	}
	t.Logf("-rfc.update: %s lists the %d cases that passed", rfcPassingFile, len(tl.passing))
}

// ---------------------------------------------------------------------------
// Cases

// rfcWant is where a step's answer must come from.
type rfcWant int

const (
	rfcAnything  rfcWant = iota // not checked
	rfcReused                   // the cache: the origin did not answer this request
	rfcForwarded                // the origin, answering this very request
	rfcETagCheck                // the origin, asked with If-None-Match (it answers 304 when that matches)
	rfcDateCheck                // the origin, asked with If-Modified-Since (likewise)
)

// rfcMatch is how an expected field is compared.
type rfcMatch int

const (
	rfcEqual rfcMatch = iota // the value (lines joined with ", ") equals
	rfcAbove                 // an integer above n
)

// rfcField is a header field the origin sends, or one an answer must
// carry.
type rfcField struct {
	name, value string
	date        bool // the value is an HTTP-date, at seconds after the origin's clock
	at          int  // those seconds, or rfcAbove's n
	// loose: the origin sends it, but its answer need not pass it through
	// verbatim (the suite leaves such fields out of that check).
	loose bool
	match rfcMatch
}

func hv(name, value string) rfcField  { return rfcField{name: name, value: value} }
func hd(name string, at int) rfcField { return rfcField{name: name, date: true, at: at} }
func hl(name, value string) rfcField  { return rfcField{name: name, value: value, loose: true} }
func hgt(name string, n int) rfcField { return rfcField{name: name, at: n, match: rfcAbove} }
func rfcText(s string) *string        { return &s }
func rfcRender(f rfcField, now time.Time) string {
	if f.date {
		return httpDate(now.Add(time.Duration(f.at) * time.Second))
	}
	return f.value
}

// rfcStep is one request of a case, the origin's answer to it, and what
// the client must get.
type rfcStep struct {
	method string   // "" = GET
	query  string   // appended to the case's URL
	req    []string // request fields "Name: value" ("@-N" as a value: an HTTP-date N seconds ago); nil = rfcDefaultRequest
	body   string   // request body

	status     int        // the origin's status; 0 = 200
	resp       []rfcField // the origin's header fields, in order
	text       string     // the origin's body; "" = the case's own
	disconnect bool       // the origin closes the connection instead of answering

	want      rfcWant
	wantCode  int        // the status the client gets; 0 = the origin's for this step (200 by default), -1 = any
	has       []rfcField // fields the answer carries
	lacks     []string   // "Name" or "Name: value" the answer does not carry
	seen      []string   // "Name: value" the origin received
	wantText  *string    // the body the client gets; nil = the origin's for this step
	anyText   bool       // the body is not checked
	notStored bool       // the answer is neither the origin's nor a stored one (an error)

	setup     bool // every check of the step is a precondition of the case
	setupWant bool // the want check is
	pause     time.Duration
}

// rfcCase is one required check of the public suite.
type rfcCase struct {
	id   string // the public suite's test id
	name string // the behaviour
	// deliberate: a documented ramjet behaviour that differs; the case is
	// skipped with this reason.
	deliberate string
	steps      []rfcStep
}

// rfcGroup is the cases of one of the suite's test files.
type rfcGroup struct {
	file  string
	cases []rfcCase
}

var rfcUnsafe = regexp.MustCompile(`[^A-Za-z0-9-]`)

// slug is the case's path segment: /rfc/<slug>.
func (c *rfcCase) slug() string { return rfcUnsafe.ReplaceAllString(c.id, "-") }

// token is the case's default body.
func (c *rfcCase) token() string { return "body of " + c.id }

// rfcDefaultRequest is what the suite's client sends when a request names
// no fields (to keep browsers' caches out of the way).
var rfcDefaultRequest = []string{"Pragma: foo", "Cache-Control: nothing-to-see-here"}

// ---------------------------------------------------------------------------
// Running a case

type rfcRunner struct {
	base   string // ramjet's URL
	origin *rfcOrigin
	client *http.Client
	slots  chan struct{} // bounds the requests in flight, not the pauses
}

// rfcAnswer is what the client got.
type rfcAnswer struct {
	status int
	header http.Header
	body   []byte
}

// rfcOutcome is a case's result: ok, or why not.
type rfcOutcome struct {
	ok  bool
	why string
}

// rfcFailed is a failed check; setup marks a precondition of the case
// (the suite's setup failures, which it does not count as passing either).
func rfcFailed(setup bool, format string, args ...any) rfcOutcome {
	why := fmt.Sprintf(format, args...)
	if setup {
		why = "setup: " + why
	}
	return rfcOutcome{why: why}
}

// run sends the case's requests in order, checks every answer as it comes
// and then what the origin received; the first failed check decides.
func (rn *rfcRunner) run(c rfcCase) rfcOutcome {
	answers := make([]rfcAnswer, len(c.steps))
	for i := range c.steps {
		s := &c.steps[i]
		a, err := rn.send(&c, i)
		if err != nil {
			return rfcFailed(s.setup, "request %d: no answer: %v", i+1, err)
		}
		answers[i] = a
		if out := c.checkAnswer(i, a); !out.ok {
			return out
		}
		time.Sleep(s.pause) // for a lifetime to run out, or Age to grow
	}
	return c.checkOrigin(answers, rn.origin.requests(c.slug()))
}

func (rn *rfcRunner) send(c *rfcCase, i int) (rfcAnswer, error) {
	s := &c.steps[i]
	method := s.method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if s.body != "" {
		body = strings.NewReader(s.body)
	}
	req, err := http.NewRequest(method, rn.base+"/rfc/"+c.slug()+s.query, body)
	if err != nil {
		return rfcAnswer{}, err
	}
	lines := s.req
	if lines == nil {
		lines = rfcDefaultRequest
	}
	for _, l := range lines {
		name, value, _ := strings.Cut(l, ":")
		value = strings.TrimSpace(value)
		if ago, ok := strings.CutPrefix(value, "@-"); ok {
			n, _ := strconv.Atoi(ago)
			value = httpDate(time.Now().Add(-time.Duration(n) * time.Second))
		}
		req.Header.Add(name, value)
	}
	req.Header.Set("Rfc-Step", strconv.Itoa(i+1))
	rn.slots <- struct{}{}
	defer func() { <-rn.slots }()
	resp, err := rn.client.Do(req)
	if err != nil {
		return rfcAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return rfcAnswer{}, fmt.Errorf("read body: %w", err)
	}
	return rfcAnswer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// from is the origin's step and request count stamped on an answer; ok
// false when the answer carries none (ramjet made it up).
func (a rfcAnswer) from() (step, count int, ok bool) {
	s, err1 := strconv.Atoi(a.header.Get("X-Origin-Step"))
	n, err2 := strconv.Atoi(a.header.Get("X-Origin-Count"))
	return s, n, err1 == nil && err2 == nil
}

// describe says where an answer came from, for failure messages.
func (a rfcAnswer) describe(k int) string {
	cs := a.header.Get("Cache-Status")
	step, _, ok := a.from()
	switch {
	case !ok:
		return fmt.Sprintf("status %d made by ramjet (Cache-Status %q)", a.status, cs)
	case step == k:
		return fmt.Sprintf("status %d forwarded to the origin (Cache-Status %q)", a.status, cs)
	}
	return fmt.Sprintf("status %d stored from request %d (Cache-Status %q)", a.status, step, cs)
}

func (c *rfcCase) checkAnswer(i int, a rfcAnswer) rfcOutcome {
	s, k := &c.steps[i], i+1
	step, _, marked := a.from()
	reused := (a.status == http.StatusNotModified && !marked) || (marked && step < k)
	switch {
	case s.want == rfcReused && !reused:
		return rfcFailed(s.setup || s.setupWant, "request %d: got %s, want the stored response", k, a.describe(k))
	case s.want == rfcForwarded && !(marked && step == k):
		return rfcFailed(s.setup || s.setupWant, "request %d: got %s, want it forwarded to the origin", k, a.describe(k))
	case s.notStored && marked:
		return rfcFailed(s.setup, "request %d: got %s, want no stored response served (the origin failed)", k, a.describe(k))
	}
	if out := s.checkStatus(k, a); !out.ok {
		return out
	}
	for _, f := range s.has {
		if why := rfcCheckField(f, a); why != "" {
			return rfcFailed(s.setup, "request %d: %s (%s)", k, why, a.describe(k))
		}
	}
	for _, l := range s.lacks {
		name, value, withValue := strings.Cut(l, ":")
		got := a.header.Values(name)
		if (!withValue && len(got) > 0) || (withValue && slices.Contains(got, strings.TrimSpace(value))) {
			return rfcFailed(s.setup, "request %d: answer carries %s: %q, want it left out (%s)", k, name, strings.Join(got, ", "), a.describe(k))
		}
	}
	return c.checkBody(i, a)
}

func (s *rfcStep) checkStatus(k int, a rfcAnswer) rfcOutcome {
	want := s.wantCode
	if want == 0 {
		want = rfcOr(s.status, http.StatusOK)
	}
	switch {
	case want < 0 || a.status == want:
		return rfcOutcome{ok: true}
	case a.status == rfcNotConditional:
		return rfcFailed(s.setup || s.setupWant, "request %d was not conditional: the origin wanted a validator it sent before", k)
	}
	return rfcFailed(s.setup, "request %d: got %s, want status %d", k, a.describe(k), want)
}

// rfcOr is v, or def when v is 0.
func rfcOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func (c *rfcCase) checkBody(i int, a rfcAnswer) rfcOutcome {
	s, k := &c.steps[i], i+1
	if s.anyText || a.status == http.StatusNoContent || a.status == http.StatusNotModified || s.method == http.MethodHead {
		return rfcOutcome{ok: true}
	}
	want := c.token()
	switch {
	case s.wantText != nil:
		want = *s.wantText
	case s.text != "":
		want = s.text
	}
	if string(a.body) != want {
		return rfcFailed(s.setup, "request %d: body %.80q, want %q (%s)", k, a.body, want, a.describe(k))
	}
	return rfcOutcome{ok: true}
}

// rfcCheckField says what is wrong with the answer's field f ("" if
// nothing).
func rfcCheckField(f rfcField, a rfcAnswer) string {
	got := a.header.Values(f.name)
	joined := strings.Join(got, ", ")
	switch {
	case len(got) == 0:
		return fmt.Sprintf("answer lacks %s", f.name)
	case f.match == rfcAbove:
		if n, err := strconv.Atoi(joined); err != nil || n <= f.at {
			return fmt.Sprintf("answer has %s: %q, want above %d", f.name, joined, f.at)
		}
		return ""
	}
	want := f.value
	if f.date {
		ns, _ := strconv.ParseInt(a.header.Get("X-Origin-Now"), 10, 64)
		want = rfcRender(f, time.Unix(0, ns))
	}
	if joined != want {
		return fmt.Sprintf("answer has %s: %q, want %q", f.name, joined, want)
	}
	return ""
}

// checkOrigin checks what the origin received: the validators and fields
// of the requests it should have got, and that the answers it made reached
// the client with its fields as it sent them.
func (c *rfcCase) checkOrigin(answers []rfcAnswer, got []rfcSeen) rfcOutcome {
	for i := range c.steps {
		s, k := &c.steps[i], i+1
		var seen *rfcSeen
		for j := range got {
			if got[j].step == k {
				seen = &got[j]
			}
		}
		validator := map[rfcWant]string{rfcETagCheck: "If-None-Match", rfcDateCheck: "If-Modified-Since"}[s.want]
		switch {
		case validator != "" && seen == nil:
			return rfcFailed(s.setup || s.setupWant, "request %d was not forwarded, want it revalidated with %s (%s)", k, validator, answers[i].describe(k))
		case validator != "" && seen.header.Get(validator) == "":
			return rfcFailed(s.setup || s.setupWant, "request %d was forwarded without %s", k, validator)
		}
		for _, l := range s.seen {
			name, value, _ := strings.Cut(l, ":")
			switch {
			case seen == nil:
				return rfcFailed(s.setup, "request %d was not forwarded, want the origin to see %s", k, l)
			case strings.Join(seen.header.Values(name), ", ") != strings.TrimSpace(value):
				return rfcFailed(s.setup, "request %d reached the origin with %s: %q, want %q", k, name, seen.header.Get(name), strings.TrimSpace(value))
			}
		}
		if why := passedThrough(s, k, answers[i], got); why != "" {
			return rfcFailed(true, "request %d: %s", k, why)
		}
	}
	return rfcOutcome{ok: true}
}

// passedThrough says which field of the origin's answer to request k did
// not reach the client as sent ("" if all did): a cache passes on what it
// does not own. The Date of an answer is the cache's to set when it
// forwards.
func passedThrough(s *rfcStep, k int, a rfcAnswer, got []rfcSeen) string {
	step, count, ok := a.from()
	if s.want == rfcReused || !ok || step != k || count < 1 || count > len(got) {
		return ""
	}
	sent := got[count-1].sent
	var names []string
	for _, f := range sent {
		if !slices.Contains(names, f.name) && !strings.EqualFold(f.name, "Date") {
			names = append(names, f.name)
		}
	}
	for _, name := range names {
		var want []string
		for _, f := range sent {
			if f.name == name {
				want = append(want, f.value)
			}
		}
		if w, g := strings.Join(want, ", "), strings.Join(a.header.Values(name), ", "); w != g {
			return fmt.Sprintf("the origin sent %s: %q, the client got %q", name, w, g)
		}
	}
	return ""
}
