package policy

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseHTTPDate(t *testing.T) {
	rfcExample := time.Date(1994, time.November, 6, 8, 49, 37, 0, time.UTC)
	tests := []struct {
		name string
		in   string
		want time.Time // zero: invalid
	}{
		{name: "IMF-fixdate", in: "Sun, 06 Nov 1994 08:49:37 GMT", want: rfcExample},
		{name: "RFC 850", in: "Sunday, 06-Nov-94 08:49:37 GMT", want: rfcExample},
		{name: "asctime", in: "Sun Nov  6 08:49:37 1994", want: rfcExample},
		{name: "asctime two-digit day", in: "Sun Nov 16 08:49:37 1994", want: rfcExample.AddDate(0, 0, 10)},
		{name: "asctime one space one digit", in: "Sun Nov 6 08:49:37 1994"},
		{name: "names ignore case", in: "sUN, 06 nov 1994 08:49:37 GMT", want: rfcExample},
		{name: "zone ignores case", in: "Sun, 06 Nov 1994 08:49:37 gmt", want: rfcExample},
		{name: "weekday not checked against the date", in: "Mon, 06 Nov 1994 08:49:37 GMT", want: rfcExample},
		{name: "runs of spaces where one is expected", in: "Sun,  06 Nov   1994  08:49:37   GMT"},
		{name: "asctime padded day and hour", in: "Sun Nov   6  8:49:37 1994"},
		{name: "one-digit hour", in: "Sun, 06 Nov 1994 8:49:37 GMT"},
		{name: "RFC 850 year 68 is 2068", in: "Friday, 06-Jan-68 00:00:00 GMT", want: time.Date(2068, time.January, 6, 0, 0, 0, 0, time.UTC)},
		{name: "RFC 850 year 69 is 1969", in: "Monday, 06-Jan-69 00:00:00 UTC", want: time.Date(1969, time.January, 6, 0, 0, 0, 0, time.UTC)},
		{name: "surrounding spaces", in: "  Sun, 06 Nov 1994 08:49:37 GMT ", want: rfcExample},
		{name: "leap day", in: "Thu, 29 Feb 2024 00:00:00 GMT", want: time.Date(2024, time.February, 29, 0, 0, 0, 0, time.UTC)},
		{name: "zero", in: "0"},
		{name: "empty", in: ""},
		{name: "not a leap year", in: "Thu, 29 Feb 2023 00:00:00 GMT"},
		{name: "hour 24", in: "Sun, 06 Nov 1994 24:00:00 GMT"},
		{name: "second 60", in: "Sun, 06 Nov 1994 08:49:60 GMT"},
		{name: "other zone", in: "Sun, 06 Nov 1994 08:49:37 CET"},
		{name: "trailing text", in: "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT"},
		{name: "missing space", in: "Sun,06 Nov 1994 08:49:37 GMT"},
		{name: "one-digit day in IMF", in: "Sun, 6 Nov 1994 08:49:37 GMT"},
		{name: "day 0", in: "Sun, 00 Nov 1994 08:49:37 GMT"},
		{name: "bad month", in: "Sun, 06 Foo 1994 08:49:37 GMT"},
		{name: "truncated", in: "Sun, 06 Nov 1994 08:4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseHTTPDate([]byte(tt.in))
			if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
				t.Errorf("ParseHTTPDate(%q) = %v, %v; want %v", tt.in, got, ok, tt.want)
			}
			checkAgainstStdlib(t, []byte(tt.in), got, ok)
		})
	}
}

func TestParseHTTPDateRoundTripsStdlibFormats(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2038, 1, 19, 3, 14, 7, 0, time.UTC),
		testNow,
	} {
		for _, layout := range []string{http.TimeFormat, time.RFC850, time.ANSIC} {
			s := tm.Format(layout)
			t.Run(s, func(t *testing.T) {
				got, ok := ParseHTTPDate([]byte(s))
				if !ok || !got.Equal(tm) {
					t.Errorf("ParseHTTPDate(%q) = %v, %v; want %v", s, got, ok, tm)
				}
			})
		}
	}
}

// checkAgainstStdlib asserts that what ParseHTTPDate accepts,
// http.ParseTime (which is laxer: runs of spaces, one-digit hours) accepts
// too, as the same instant, but for a zone in another case than GMT's.
func checkAgainstStdlib(t *testing.T, in []byte, got time.Time, ok bool) {
	t.Helper()
	s := string(trimOWS(in))
	if !ok || strings.Contains(s, "gmt") || strings.Contains(s, "Gmt") {
		return
	}
	want, err := http.ParseTime(s)
	if err != nil || !want.Equal(got) {
		t.Errorf("ParseHTTPDate(%q) = %v, %v but http.ParseTime = %v, %v", in, got, ok, want, err)
	}
}
