package main_test

// End-to-end tests of how ramjet names the failures it answers itself
// (issue 33): every 5xx of its own carries Ramjet-Error with a short
// reason, as the soak counts them; the origin's own 5xx passes without.

import (
	"net/http"
	"testing"
	"time"
)

func TestOwnBadGatewayNamesItsReasonAndTheOriginsOwnDoesNot(t *testing.T) {
	t.Parallel()
	o := startOriginWith(t, "", "location = /own502 { return 502 \"the origin's own\\n\"; }\n")
	rj := startRamjet(t, o.URL)
	c, ns := newClient(t), nsFor(t)

	r := get(t, c, rj.URL+"/own502")
	mustStatus(t, r, http.StatusBadGateway, "the origin's own 502")
	if got := r.Header.Get("Ramjet-Error"); got != "" {
		t.Errorf("the origin's own 502 carries Ramjet-Error %q; want none (ramjet did not fail)", got)
	}

	o.Stop()
	from := len(rj.Output())
	r = get(t, c, rj.URL+"/e/"+ns+"/gone")
	mustStatus(t, r, http.StatusBadGateway, "with the origin stopped")
	if got := r.Header.Get("Ramjet-Error"); got != "origin-refused" {
		t.Errorf("with the origin stopped: Ramjet-Error %q, want origin-refused", got)
	}
	rj.WaitOutput(t, from, "reason=origin-refused", 10*time.Second) // the process log's line says the same, with the error
}
