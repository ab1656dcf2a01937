package conf

import (
	"math"
	"testing"
	"time"
)

func TestParseSizeAcceptsBinaryDecimalAndBytes(t *testing.T) {
	tests := []struct {
		in   string
		want Size
	}{
		{"0", 0},
		{"1048576", 1 << 20},
		{"256MiB", 256 << 20},
		{"1GiB", 1 << 30},
		{"64KiB", 64 << 10},
		{"2TiB", 2 << 40},
		{"512KB", 512000},
		{"1MB", 1000000},
		{"3GB", 3e9},
		{"1TB", 1e12},
		{"10B", 10},
		{"64kib", 64 << 10},
		{"64KIB", 64 << 10},
		{"1mb", 1000000},
		{" 256 MiB ", 256 << 20},
		{"8388607TiB", 8388607 * TiB},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseSizeRejectsNonSizes(t *testing.T) {
	for _, in := range []string{
		"", " ", "MiB", "12 parsecs", "-1", "-1MiB", "+1MiB", "1.5MiB", "64k", "1M", "1G",
		"1 Mi B", "0x10", "1e6", "8388608TiB", "9223372036854775808", "99999999999999999999",
	} {
		t.Run(in, func(t *testing.T) {
			if got, err := ParseSize(in); err == nil {
				t.Fatalf("ParseSize(%q) = %d, want error", in, got)
			}
		})
	}
}

func TestSizeStringUsesLargestExactUnit(t *testing.T) {
	tests := []struct {
		in   Size
		want string
	}{
		{0, "0"},
		{1, "1"},
		{1000, "1KB"},
		{1024, "1KiB"},
		{1536, "1536"},
		{256 * MiB, "256MiB"},
		{1536 * KiB, "1536KiB"},
		{5e9, "5GB"},
		{-3, "-3"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.in.String(); got != tt.want {
				t.Fatalf("Size(%d).String() = %q, want %q", int64(tt.in), got, tt.want)
			}
		})
	}
}

func TestParseDurationAcceptsGoDurationsAndSeconds(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"10s", 10 * time.Second},
		{"1h30m", 90 * time.Minute},
		{"250ms", 250 * time.Millisecond},
		{"0", 0},
		{"0s", 0},
		{"60", time.Minute},
		{" 5 ", 5 * time.Second},
		{"-5s", -5 * time.Second},
		{"-5", -5 * time.Second},
		{"1.5s", 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if err != nil || time.Duration(got) != tt.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseDurationRejectsNonDurations(t *testing.T) {
	for _, in := range []string{"", "abc", "10 s", "1.5", "1d", "9999999999999", "99999999999999999999", "--5"} {
		t.Run(in, func(t *testing.T) {
			if got, err := ParseDuration(in); err == nil {
				t.Fatalf("ParseDuration(%q) = %v, want error", in, got)
			}
		})
	}
}

func TestUnmarshalTextUsesParsers(t *testing.T) {
	var s Size
	var d Duration
	if err := s.UnmarshalText([]byte("2MiB")); err != nil || s != 2*MiB {
		t.Fatalf("Size.UnmarshalText = %v, %v", s, err)
	}
	if err := d.UnmarshalText([]byte("90")); err != nil || d != Duration(90*time.Second) {
		t.Fatalf("Duration.UnmarshalText = %v, %v", d, err)
	}
	if s.UnmarshalText([]byte("big")) == nil || d.UnmarshalText([]byte("long")) == nil {
		t.Fatal("UnmarshalText accepted garbage")
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "256MiB", "1GB", "12 parsecs", "9223372036854775807", "8388607TiB", " 1 kib"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseSize(in)
		if err != nil {
			return
		}
		if got < 0 {
			t.Fatalf("ParseSize(%q) = %d, negative", in, got)
		}
		back, err := ParseSize(got.String())
		if err != nil || back != got {
			t.Fatalf("ParseSize(%q) = %d; its String %q reads back as %d, %v", in, got, got.String(), back, err)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10s", "1h30m", "60", "-5", "9223372036", "1.5h", "abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseDuration(in)
		if err != nil {
			return
		}
		if got == Duration(math.MinInt64) {
			return // time.Duration.String of MinInt64 does not parse back
		}
		back, err := ParseDuration(got.String())
		if err != nil || back != got {
			t.Fatalf("ParseDuration(%q) = %v; reads back as %v, %v", in, got, back, err)
		}
	})
}
