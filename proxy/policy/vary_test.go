package policy

import (
	"slices"
	"testing"
)

func TestVaryStar(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{name: "absent", in: "", want: false},
		{name: "alone", in: "*", want: true},
		{name: "among names with spaces", in: "Accept ,  * , Cookie", want: true},
		{name: "star inside a name is not star", in: "X-*", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := varyStar([]byte(tt.in)); got != tt.want {
				t.Errorf("varyStar(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestVaryHeaders(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "absent", in: "", want: nil},
		{name: "lower-cased and deduped", in: "Cookie, COOKIE,User-Agent", want: []string{"cookie", "user-agent"}},
		{name: "accept-encoding dropped in any case", in: "ACCEPT-ENCODING, Origin", want: []string{"origin"}},
		{name: "empty items dropped", in: " , ,Origin,", want: []string{"origin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := varyHeaders([]byte(tt.in)); !slices.Equal(got, tt.want) {
				t.Errorf("varyHeaders(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestVaryCookies(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "absent", in: "", want: nil},
		{name: "plugin postpass cookie", in: "cookie=wp-postpass_abc", want: []string{"wp-postpass_abc"}},
		{name: "several, case kept, deduped", in: "cookie=A, COOKIE=b,cookie=A", want: []string{"A", "b"}},
		{name: "non-cookie and empty items ignored", in: "value=x, cookie=, cookie= ,foo", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := varyCookies([]byte(tt.in)); !slices.Equal(got, tt.want) {
				t.Errorf("varyCookies(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
