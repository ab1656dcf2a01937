package conf

import (
	"encoding"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration that reads from config as "10s", "1h30m"
// or a plain integer number of seconds. Convert with time.Duration(d).
type Duration time.Duration

// ParseDuration parses s as a Go duration ("250ms", "1h30m") or, when s
// is a plain integer, as that many seconds. Negative values parse; Validate
// rejects them where they make no sense.
func ParseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	if isInteger(t) {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || n > math.MaxInt64/int64(time.Second) || n < math.MinInt64/int64(time.Second) {
			return 0, fmt.Errorf("%q is not a duration: too large", s)
		}
		return Duration(time.Duration(n) * time.Second), nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	return Duration(d), nil
}

// String formats d like time.Duration ("1m30s"); ParseDuration reads it back.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseDuration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Size is a number of bytes. It reads from config as "256MiB", "1GiB",
// "512KB", "1MB" or a plain integer number of bytes.
type Size int64

// Byte multiples accepted by ParseSize.
const (
	KiB Size = 1 << (10 * (iota + 1))
	MiB
	GiB
	TiB
)

// sizeUnits maps a lower-cased suffix to its multiplier. Bare "k", "m"
// and "g" are left out on purpose: they are ambiguous between 1000 and 1024.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": int64(KiB), "mib": int64(MiB), "gib": int64(GiB), "tib": int64(TiB),
}

// ParseSize parses s as a non-negative integer followed by an optional
// unit: B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers
// of 1024), case-insensitive, optionally separated by spaces. A plain
// integer is bytes. Fractions are not accepted.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	mult, ok := sizeUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if i == 0 || !ok {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size: too large", s)
	}
	return Size(n * mult), nil
}

// String formats s with the largest unit that divides it exactly
// ("256MiB", "512KB", "1000"); ParseSize reads it back.
func (s Size) String() string {
	if s > 0 {
		for _, u := range []struct {
			name string
			n    int64
		}{
			{"TiB", int64(TiB)}, {"GiB", int64(GiB)}, {"MiB", int64(MiB)}, {"KiB", int64(KiB)},
			{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3},
		} {
			if int64(s)%u.n == 0 {
				return strconv.FormatInt(int64(s)/u.n, 10) + u.name
			}
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// MarshalText implements encoding.TextMarshaler.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseSize.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// isInteger reports whether s is decimal digits with an optional sign.
func isInteger(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

var (
	_ encoding.TextMarshaler   = Duration(0)
	_ encoding.TextUnmarshaler = (*Duration)(nil)
	_ encoding.TextMarshaler   = Size(0)
	_ encoding.TextUnmarshaler = (*Size)(nil)
)
