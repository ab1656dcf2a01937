package policy

import "testing"

func TestParseCacheControl(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want CacheControl
	}{
		{name: "absent", in: "", want: CacheControl{}},
		{name: "flags", in: "no-store, no-cache, private, public, must-revalidate, proxy-revalidate",
			want: CacheControl{NoStore: true, NoCache: true, Private: true, Public: true, MustRevalidate: true, ProxyRevalidate: true}},
		{name: "names ignore case", in: "Public, MAX-AGE=60", want: CacheControl{Public: true, MaxAge: 60, HasMaxAge: true}},
		{name: "all numbers", in: "max-age=1, s-maxage=2, stale-while-revalidate=3, stale-if-error=4",
			want: CacheControl{MaxAge: 1, SMaxAge: 2, StaleWhileRevalidate: 3, StaleIfError: 4, HasMaxAge: true, HasSMaxAge: true, HasSWR: true, HasSIE: true}},
		{name: "spaces and quotes tolerated", in: ` max-age = " 60 " ,s-maxage="5"`,
			want: CacheControl{MaxAge: 60, HasMaxAge: true, SMaxAge: 5, HasSMaxAge: true}},
		{name: "zero is valid", in: "max-age=0", want: CacheControl{HasMaxAge: true}},
		{name: "negative ignored", in: "max-age=-1", want: CacheControl{}},
		{name: "fraction ignored", in: "max-age=1.5", want: CacheControl{}},
		{name: "trailing garbage ignored", in: "max-age=10s", want: CacheControl{}},
		{name: "missing value ignored", in: "max-age, s-maxage=", want: CacheControl{}},
		{name: "first valid value counts", in: "max-age=bad, max-age=7, max-age=9", want: CacheControl{MaxAge: 7, HasMaxAge: true}},
		{name: "huge value clamps to a year", in: "max-age=99999999999999999999999999999", want: CacheControl{MaxAge: maxSeconds, HasMaxAge: true}},
		{name: "qualified private and no-cache", in: `private="Set-Cookie", no-cache="X-A, X-B"`, want: CacheControl{Private: true, NoCache: true}},
		{name: "comma inside quotes is not a separator", in: `community="no-store, max-age=1", public`, want: CacheControl{Public: true}},
		{name: "escaped quote inside quotes", in: `x="a\", no-store", max-age=3`, want: CacheControl{MaxAge: 3, HasMaxAge: true}},
		{name: "unterminated quote swallows the rest", in: `x="a, no-store`, want: CacheControl{}},
		{name: "prefix is not a match", in: "no-stored, max-ages=5, publicly", want: CacheControl{}},
		{name: "empty items", in: ",,, ,public,,", want: CacheControl{Public: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseCacheControl([]byte(tt.in)); got != tt.want {
				t.Errorf("ParseCacheControl(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}
