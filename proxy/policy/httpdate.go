package policy

import "time"

var (
	shortDays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	longDays  = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}
	months    = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
)

// ParseHTTPDate parses an HTTP date in any of the three formats of RFC 9110
// 5.6.7, as http.ParseTime does (names case-insensitive, the weekday not
// checked against the date, runs of spaces where one is expected, two-digit
// years 69-99 in the 1900s), without allocating. Unlike http.ParseTime it
// ignores surrounding white space and rejects fractional seconds, signed
// years and RFC 850 zones other than GMT and UTC. The result is UTC.
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
	s.literal(" GMT")
	return s.time(year, month, day, h, m, sec)
}

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
	day := s.number(1, 2)
	s.literal(" ")
	h, m, sec := s.clock()
	s.literal(" ")
	year := s.number(4, 4)
	return s.time(year, month, day, h, m, sec)
}

// dateScanner consumes a date from the front of rest; ok turns false at
// the first mismatch and stays false.
type dateScanner struct {
	rest []byte
	ok   bool
}

// literal consumes lit, where a space matches a run of spaces (as in
// time.Parse).
func (s *dateScanner) literal(lit string) {
	for i := 0; s.ok && i < len(lit); i++ {
		switch {
		case lit[i] == ' ' && len(s.rest) > 0 && s.rest[0] == ' ':
			s.rest = trimLeadingSpaces(s.rest)
		case len(s.rest) > 0 && s.rest[0] == lit[i] && lit[i] != ' ':
			s.rest = s.rest[1:]
		default:
			s.ok = false
		}
	}
}

func trimLeadingSpaces(b []byte) []byte {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return b
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

// clock consumes "15:04:05", the hour possibly one digit.
func (s *dateScanner) clock() (h, m, sec int) {
	h = s.number(1, 2)
	s.literal(":")
	m = s.number(2, 2)
	s.literal(":")
	sec = s.number(2, 2)
	return h, m, sec
}

// zone consumes the zone of an RFC 850 date: GMT or UTC.
func (s *dateScanner) zone() {
	if s.ok && len(s.rest) >= 3 {
		switch string(s.rest[:3]) {
		case "GMT", "UTC":
			s.rest = s.rest[3:]
			return
		}
	}
	s.ok = false
}

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
