package main_test

// End-to-end test of what one request may cost the WAF: the CRS runs
// libinjection's SQL detection (@detectSQLi, rule 942100) on every
// argument, and libinjection-go before v0.3.4 parsed a string literal
// full of escaped quotes in time quadratic in its length
// (GHSA-974q-67pr-5pc2): a form field within the default 8 MiB body
// limit held a core for minutes.

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestWAFInspectsAQuoteHeavyFieldInLinearTime: a 4 MB form field of
// escaped quotes is inspected and answered at all. The bound is not a
// speed target: the quadratic parser took 8.9 s for 800 KB on an idle
// machine, about 25 times that for this field, and the linear one takes
// a few seconds at most on a loaded one; a minute tells the two apart.
func TestWAFInspectsAQuoteHeavyFieldInLinearTime(t *testing.T) {
	t.Parallel()
	_, rj, _ := startWAF(t, "block")
	c, ns := newClient(t), nsFor(t)
	field := "q='" + strings.Repeat(`\'`, 2_000_000)
	start := time.Now()
	r, err := tryDo(c, http.MethodPost, rj.URL+"/e/"+ns+"/quotes", strings.NewReader(field),
		"Content-Type: application/x-www-form-urlencoded")
	took := time.Since(start)
	if err != nil {
		t.Fatalf("POST of %d bytes after %s: %v", len(field), took, err)
	}
	if r.Status != http.StatusOK && r.Status != http.StatusForbidden {
		t.Errorf("status %d, want 200 or 403 (inspected)", r.Status)
	}
	if took > time.Minute {
		t.Errorf("a %d-byte field of escaped quotes took %s to inspect and answer, want well under a minute", len(field), took)
	}
	t.Logf("%d bytes inspected and answered in %s", len(field), took)
}
