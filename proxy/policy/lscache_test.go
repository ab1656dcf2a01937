package policy

import "testing"

func TestParseLSCacheControl(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want LSCacheControl
	}{
		{name: "absent", in: "", want: LSCacheControl{}},
		{name: "only separators is absent", in: " , ,", want: LSCacheControl{}},
		{name: "unknown directive is still present", in: "foo", want: LSCacheControl{Present: true}},
		{name: "plugin no-cache with esi", in: "no-cache,esi=on", want: LSCacheControl{Present: true, NoCache: true, ESI: true}},
		{name: "plugin public page", in: "public,no-vary,max-age=604800,esi=on",
			want: LSCacheControl{Present: true, Public: true, NoVary: true, ESI: true, MaxAge: 604800, HasMaxAge: true}},
		{name: "plugin shared private page", in: "shared, private, no-vary, max-age=864020, esi=on",
			want: LSCacheControl{Present: true, Public: true, Private: true, Shared: true, NoVary: true, ESI: true, MaxAge: 864020, HasMaxAge: true}},
		{name: "max-age clears no-cache and no-store", in: "no-cache, no-store, max-age=5",
			want: LSCacheControl{Present: true, Public: true, MaxAge: 5, HasMaxAge: true}},
		{name: "s-maxage clears no-store", in: "no-store, s-maxage=5",
			want: LSCacheControl{Present: true, Public: true, SMaxAge: 5, HasSMaxAge: true}},
		{name: "max-age without digits changes nothing", in: "no-cache, max-age=abc",
			want: LSCacheControl{Present: true, NoCache: true}},
		{name: "negative max-age is ignored", in: "max-age=-1", want: LSCacheControl{Present: true}},
		{name: "max-age ignored once s-maxage seen", in: "no-store, s-maxage=20, max-age=10",
			want: LSCacheControl{Present: true, Public: true, SMaxAge: 20, HasSMaxAge: true}},
		{name: "max-age before s-maxage is kept", in: "max-age=10, s-maxage=20",
			want: LSCacheControl{Present: true, Public: true, MaxAge: 10, HasMaxAge: true, SMaxAge: 20, HasSMaxAge: true}},
		{name: "public clears an earlier private", in: "private, public",
			want: LSCacheControl{Present: true, Public: true}},
		{name: "private after public stays", in: "public, private",
			want: LSCacheControl{Present: true, Public: true, Private: true}},
		{name: "prefix match ignores what follows the name", in: "PUBLICly, no-varying, esi-ON",
			want: LSCacheControl{Present: true, Public: true, NoVary: true}},
		{name: "value after spaces equals and quotes", in: `max-age = "60", esi = "on"`,
			want: LSCacheControl{Present: true, Public: true, MaxAge: 60, HasMaxAge: true, ESI: true}},
		{name: "leading digits count as OpenLiteSpeed atoi", in: "max-age=12abc",
			want: LSCacheControl{Present: true, Public: true, MaxAge: 12, HasMaxAge: true}},
		{name: "max-stale", in: "max-stale=30", want: LSCacheControl{Present: true, MaxStale: 30, HasMaxStale: true}},
		{name: "huge number clamps to a year", in: "max-age=184467440737095516160",
			want: LSCacheControl{Present: true, Public: true, MaxAge: maxSeconds, HasMaxAge: true}},
		{name: "other directives are recognised and ignored", in: "must-revalidate, proxy-revalidate, no-transform, set-blank, no-autoflush, min-fresh=3, only-if-cached",
			want: LSCacheControl{Present: true}},
		{name: "esi off clears on", in: "esi=on, esi=off", want: LSCacheControl{Present: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseLSCacheControl([]byte(tt.in)); got != tt.want {
				t.Errorf("ParseLSCacheControl(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}
