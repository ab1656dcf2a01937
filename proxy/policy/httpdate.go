package policy

import "time"

var (
	shortDays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	longDays  = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}
	months    = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
)

// ParseHTTPDate parses an HTTP date in any of the three formats of RFC 9110
// 5.6.7, to their grammar: one space where the grammar has one, two-digit
// hours, minutes and seconds, "GMT" (RFC 850 dates also "UTC"). Names and
// the zone are matched ignoring case, the weekday is not checked against
// the date, surrounding white space is ignored and two-digit years 69-99
// are in the 1900s. Anything else is invalid, which for Expires means
// already expired (RFC 9111 5.3). It does not allocate; the result is UTC.
func ParseHTTPDate(b []byte) (time.Time, bool) {
	b = trimOWS(b)
	if t, ok := parseIMFFixdate(b); ok {
		return t, true
	}
	if t, ok := parseRFC850(b); ok {
		return t, true
	}
	return parseASCTime(b)
}

// parseIMFFixdate parses "Sun, 06 Nov 1994 08:49:37 GMT".
func parseIMFFixdate(b []byte) (time.Time, bool) {
	s := dateScanner{rest: b, ok: true}
	s.name(shortDays)
	s.literal(", ")
	day := s.number(2, 2)
	s.literal(" ")
	month := s.name(months) + 1
	s.literal(" ")
	year := s.number(4, 4)
	s.literal(" ")
	h, m, sec := s.clock()
	s.literal(" ")
	s.name(gmt)
	return s.time(year, month, day, h, m, sec)
}

var gmt = []string{"gmt"}

// parseRFC850 parses "Sunday, 06-Nov-94 08:49:37 GMT".
func parseRFC850(b []byte) (time.Time, bool) {
	s := dateScanner{rest: b, ok: true}
	s.name(longDays)
	s.literal(", ")
	day := s.number(2, 2)
	s.literal("-")
	month := s.name(months) + 1
	s.literal("-")
	year := s.number(2, 2)
	s.literal(" ")
	h, m, sec := s.clock()
	s.literal(" ")
	s.zone()
	if year >= 69 {
		year += 1900
	} else {
		year += 2000
	}
	return s.time(year, month, day, h, m, sec)
}

// parseASCTime parses "Sun Nov  6 08:49:37 1994" (also "Nov 6", "Nov 06").
func parseASCTime(b []byte) (time.Time, bool) {
	s := dateScanner{rest: b, ok: true}
	s.name(shortDays)
	s.literal(" ")
	month := s.name(months) + 1
	s.literal(" ")
	day := s.asctimeDay()
	s.literal(" ")
	h, m, sec := s.clock()
	s.literal(" ")
	year := s.number(4, 4)
	return s.time(year, month, day, h, m, sec)
}

// asctimeDay consumes asctime's day: two digits, or a space and one.
func (s *dateScanner) asctimeDay() int {
	if s.ok && len(s.rest) > 0 && s.rest[0] == ' ' {
		s.rest = s.rest[1:]
		return s.number(1, 1)
	}
	return s.number(2, 2)
}

// dateScanner consumes a date from the front of rest; ok turns false at
// the first mismatch and stays false.
type dateScanner struct {
	rest []byte
	ok   bool
}

// literal consumes lit exactly.
func (s *dateScanner) literal(lit string) {
	for i := 0; s.ok && i < len(lit); i++ {
		if len(s.rest) == 0 || s.rest[0] != lit[i] {
			s.ok = false
			return
		}
		s.rest = s.rest[1:]
	}
}

// name consumes one of names (lower case), ignoring case, and returns its index.
func (s *dateScanner) name(names []string) int {
	for i, n := range names {
		if s.ok && hasPrefixFold(s.rest, n) {
			s.rest = s.rest[len(n):]
			return i
		}
	}
	s.ok = false
	return 0
}

// number consumes minDigits to maxDigits decimal digits.
func (s *dateScanner) number(minDigits, maxDigits int) int {
	n, i := 0, 0
	for ; s.ok && i < maxDigits && i < len(s.rest) && isDigit(s.rest[i]); i++ {
		n = n*10 + int(s.rest[i]-'0')
	}
	if i < minDigits {
		s.ok = false
	}
	s.rest = s.rest[i:]
	return n
}

// clock consumes "15:04:05".
func (s *dateScanner) clock() (h, m, sec int) {
	h = s.number(2, 2)
	s.literal(":")
	m = s.number(2, 2)
	s.literal(":")
	sec = s.number(2, 2)
	return h, m, sec
}

// zone consumes the zone of an RFC 850 date: GMT or UTC, in any case.
func (s *dateScanner) zone() { s.name(rfc850Zones) }

var rfc850Zones = []string{"gmt", "utc"}

// time validates the fields and that all input was consumed.
func (s *dateScanner) time(year, month, day, h, m, sec int) (time.Time, bool) {
	if !s.ok || len(s.rest) != 0 || h > 23 || m > 59 || sec > 59 ||
		day < 1 || day > daysIn(time.Month(month), year) {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, h, m, sec, 0, time.UTC), true
}

func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
