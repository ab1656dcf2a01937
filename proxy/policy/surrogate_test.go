package policy

import "testing"

func TestParseSurrogateControl(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want SurrogateControl
	}{
		{name: "absent", in: "", want: SurrogateControl{}},
		{name: "max-age", in: "max-age=300", want: SurrogateControl{MaxAge: 300, HasMaxAge: true}},
		{name: "max-age with stale", in: "max-age=300+60", want: SurrogateControl{MaxAge: 300, HasMaxAge: true, Stale: 60}},
		{name: "quoted max-age with stale", in: `max-age="300+60"`, want: SurrogateControl{MaxAge: 300, HasMaxAge: true, Stale: 60}},
		{name: "bad stale keeps max-age", in: "max-age=300+x", want: SurrogateControl{MaxAge: 300, HasMaxAge: true}},
		{name: "bad max-age drops stale", in: "max-age=x+60", want: SurrogateControl{}},
		{name: "first valid max-age counts", in: "max-age=-1, max-age=10+5, max-age=20", want: SurrogateControl{MaxAge: 10, HasMaxAge: true, Stale: 5}},
		{name: "no-store", in: "No-Store", want: SurrogateControl{NoStore: true}},
		{name: "content ESI", in: `content="ESI/1.0"`, want: SurrogateControl{ESI: true}},
		{name: "content ESI among others", in: `max-age=60, content="ESI-INV/1.0 esi/1.0"`, want: SurrogateControl{MaxAge: 60, HasMaxAge: true, ESI: true}},
		{name: "content without ESI", in: `content="ESI-INV/1.0"`, want: SurrogateControl{}},
		{name: "targeted directives are not ours", in: "no-store;abc, max-age=60;abc", want: SurrogateControl{}},
		{name: "huge numbers clamp", in: "max-age=99999999999999999999+99999999999999999999",
			want: SurrogateControl{MaxAge: maxSeconds, HasMaxAge: true, Stale: maxSeconds}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseSurrogateControl([]byte(tt.in)); got != tt.want {
				t.Errorf("ParseSurrogateControl(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}
