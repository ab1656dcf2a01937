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

// TestWAFInspectsAQuoteHeavyFieldInLinearTime: an 800 KB form field of
// escaped quotes is inspected and answered in well under a second of
// work (about 8 s of CPU with the quadratic parser on an idle machine).
func TestWAFInspectsAQuoteHeavyFieldInLinearTime(t *testing.T) {
	t.Parallel()
	_, rj, _ := startWAF(t, "block")
	c, ns := newClient(t), nsFor(t)
	field := "q='" + strings.Repeat(`\'`, 400_000)
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
	if took > 3*time.Second {
		t.Errorf("a %d-byte field of escaped quotes took %s to inspect and answer, want under 3 s", len(field), took)
	}
}
