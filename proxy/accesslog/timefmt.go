package accesslog

import "time"

// The time as nginx writes $time_local ("02/Jan/2006:15:04:05 -0700")
// and $time_iso8601 (with milliseconds, which JSON consumers read and
// ordering needs: "2006-01-02T15:04:05.000-07:00"), written digit by
// digit: time.AppendFormat takes several times as long, as it reads the
// layout for every line.

const months = "JanFebMarAprMayJunJulAugSepOctNovDec"

func appendTimeLocal(dst []byte, t time.Time) []byte {
	year, month, day := t.Date()
	dst = append2(dst, day)
	dst = append(dst, '/')
	dst = append(dst, months[3*(month-1):3*month]...)
	dst = append(dst, '/')
	dst = append4(dst, year)
	dst = append(dst, ':')
	dst = appendClock(dst, t)
	dst = append(dst, ' ')
	return appendZone(dst, t, false)
}

func appendTimeISO(dst []byte, t time.Time) []byte {
	year, month, day := t.Date()
	dst = append4(dst, year)
	dst = append(dst, '-')
	dst = append2(dst, int(month))
	dst = append(dst, '-')
	dst = append2(dst, day)
	dst = append(dst, 'T')
	dst = appendClock(dst, t)
	ms := t.Nanosecond() / 1e6
	dst = append(dst, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return appendZone(dst, t, true)
}

// appendClock is "15:04:05".
func appendClock(dst []byte, t time.Time) []byte {
	h, m, s := t.Clock()
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, m)
	dst = append(dst, ':')
	return append2(dst, s)
}

// appendZone is the offset from UTC, "-0700", or "-07:00" with colon.
func appendZone(dst []byte, t time.Time, colon bool) []byte {
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	dst = append(dst, sign)
	dst = append2(dst, off/3600)
	if colon {
		dst = append(dst, ':')
	}
	return append2(dst, off/60%60)
}

func append2(dst []byte, n int) []byte { return append(dst, byte('0'+n/10%10), byte('0'+n%10)) }

func append4(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/1000%10), byte('0'+n/100%10), byte('0'+n/10%10), byte('0'+n%10))
}
