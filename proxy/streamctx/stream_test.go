package streamctx

import (
	"testing"

	"github.com/valyala/fasthttp"
)

func TestHeadAnnouncesTheMirroredLengthOrNone(t *testing.T) {
	var known, zero, unknown, body fasthttp.Response
	known.Header.SetContentLength(13)
	zero.Header.SetContentLength(0)
	body.SetBodyString("hello")
	cases := []struct {
		name string
		resp *fasthttp.Response
		head bool
		want int
	}{
		{"HEAD with the GET's length", &known, true, 13},
		{"HEAD of an empty GET", &zero, true, 0},
		{"HEAD whose length nobody knows", &unknown, true, -1},
		{"GET with a body", &body, false, 5},
		{"GET with no body", &unknown, false, 0},
	}
	for _, c := range cases {
		if got := ContentLength(c.resp, c.head); got != c.want {
			t.Errorf("%s: ContentLength = %d, want %d", c.name, got, c.want)
		}
	}
}
