package main

import "testing"

func TestMedianOfOddAndEvenCounts(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{7}, 7},
		{"odd count takes the middle", []float64{3, 1, 2}, 2},
		{"even count takes the mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"unsorted with repeats", []float64{5, 5, 1, 9, 5}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := median(tt.in); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestMedianLeavesItsInputUnsorted(t *testing.T) {
	in := []float64{3, 1, 2}
	median(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Fatalf("median sorted its input: %v", in)
	}
}

func TestRatioAgainstAContenderThatDidNotRunIsZero(t *testing.T) {
	tests := []struct {
		name string
		a, b float64
		want float64
	}{
		{"twice as fast", 200, 100, 2},
		{"half", 50, 100, 0.5},
		{"zero base", 50, 0, 0},
		{"negative base", 50, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ratio(tt.a, tt.b); got != tt.want {
				t.Errorf("ratio(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestLossesNameTheColumnsRamjetIsWorseOnBeyondTwoPercent(t *testing.T) {
	tests := []struct {
		name string
		cs   []cmp
		want string
	}{
		{"wins everywhere", []cmp{{"req/s", 1.5, true}, {"p99", 0.5, false}}, "–"},
		{"within the margin is no loss", []cmp{{"req/s", 0.985, true}, {"p99", 1.015, false}}, "–"},
		{"slower", []cmp{{"req/s", 0.97, true}, {"p99", 0.9, false}}, "**req/s**"},
		{"higher latency and CPU", []cmp{{"req/s", 1.1, true}, {"p99", 1.03, false}, {"CPU/req", 1.5, false}}, "**p99, CPU/req**"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := losses(tt.cs...); got != tt.want {
				t.Errorf("losses = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGroupByKeepsTheOrderKeysFirstAppearIn(t *testing.T) {
	rows := []Record{{Contender: "b", RPS: 1}, {Contender: "a", RPS: 2}, {Contender: "b", RPS: 3}}
	ss := groupBy(rows, func(r Record) string { return r.Contender })
	if len(ss) != 2 || ss[0].key != "b" || ss[1].key != "a" {
		t.Fatalf("keys %+v, want b then a", ss)
	}
	if got := ss[0].med(rps); got != 2 {
		t.Errorf("median of b = %v, want 2", got)
	}
	if find(ss, "c") != nil {
		t.Error("find of a missing key is not nil")
	}
}

func TestNearestRankP99OfFewSamplesIsTheMaximum(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3}
	if got := nearestRank(v, 0.99); got != 5 {
		t.Errorf("p99 = %v, want 5", got)
	}
	if got := nearestRank(v, 0.5); got != 3 {
		t.Errorf("p50 = %v, want 3", got)
	}
	if got := nearestRank(nil, 0.5); got != 0 {
		t.Errorf("p50 of none = %v, want 0", got)
	}
}
