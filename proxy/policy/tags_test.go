package policy

import (
	"slices"
	"testing"
)

func TestAppendTags(t *testing.T) {
	tests := []struct {
		name string
		dst  []string
		in   string
		want []string
	}{
		{name: "empty header appends nothing", dst: []string{"x"}, in: "", want: []string{"x"}},
		{name: "only separators appends nothing", in: " ,\t, ", want: nil},
		{name: "LiteSpeed commas", in: "368_HTTP.200,368_product,368_", want: []string{"368_HTTP.200", "368_product", "368_"}},
		{name: "Surrogate-Key spaces", in: "post-1  user-2 ", want: []string{"post-1", "user-2"}},
		{name: "commas and spaces mixed", in: " a , b,c d\t,e ", want: []string{"a", "b", "c", "d", "e"}},
		{name: "appends after dst without dedupe", dst: []string{"a"}, in: "a,b,a", want: []string{"a", "a", "b", "a"}},
		{name: "public: prefix kept", in: "public:368_Po.1", want: []string{"public:368_Po.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendTags(slices.Clone(tt.dst), []byte(tt.in))
			if !slices.Equal(got, tt.want) {
				t.Errorf("AppendTags(%q, %q) = %q, want %q", tt.dst, tt.in, got, tt.want)
			}
		})
	}
}

func TestDedupeKeepsFirstOccurrenceAtAnySize(t *testing.T) {
	for _, n := range []int{3, dedupeLinear + 5} {
		var in, want []string
		for i := range n {
			s := string(rune('A' + i))
			in = append(in, s, s)
			want = append(want, s)
		}
		if got := dedupe(in); !slices.Equal(got, want) {
			t.Errorf("n=%d: dedupe = %q, want %q", n, got, want)
		}
	}
}
