//go:build !race

package policy

import "testing"

func TestDecideAllocatesOnlyForStoredLists(t *testing.T) {
	tests := []struct {
		name string
		in   *Input
		max  float64
	}{
		// Refused: nothing at all.
		{name: "refused response", in: plainRefusal(), max: 0},
		// Stored: tag slice + tag string, vary slice + string, cookie slice + string.
		{name: "stored WordPress page", in: wordpressPage(), max: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, func() { Decide(tt.in) }); n > tt.max {
				t.Errorf("Decide allocated %v times, want at most %v", n, tt.max)
			}
		})
	}
}
