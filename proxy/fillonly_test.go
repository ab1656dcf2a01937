package proxy

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// A page's snapshot for its fragments drops the fill-only fields with
// delCanonical, which does not normalise the name: each must be spelt
// as fasthttp stores it, whatever case the client sent it in.
func TestFillOnlyNamesAreCanonical(t *testing.T) {
	for _, name := range fillOnly {
		var h fasthttp.RequestHeader
		h.Set(strings.ToLower(name), "1")
		h.Set("X-Other", "kept")
		delCanonical(&h, name)
		if v := h.Peek(name); len(v) > 0 {
			t.Errorf("%s sent as %q survives delCanonical: %q", name, strings.ToLower(name), v)
		}
		if string(h.Peek("X-Other")) != "kept" {
			t.Errorf("delCanonical(%s) dropped another field", name)
		}
	}
}
