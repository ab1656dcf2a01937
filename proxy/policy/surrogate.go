package policy

import "bytes"

// SurrogateControl is a parsed Surrogate-Control response header (Edge
// Architecture Specification 1.0).
type SurrogateControl struct {
	NoStore   bool
	MaxAge    int // seconds
	HasMaxAge bool
	Stale     int // seconds: M of max-age=N+M, the stale-if-error window
	ESI       bool
}

// ParseSurrogateControl parses b: no-store, max-age=N[+M] (first valid one
// counts) and content="…" listing ESI/1.0. Directives targeted at a device
// (";token") are not addressed to us and do not match.
func ParseSurrogateControl(b []byte) SurrogateControl {
	var s SurrogateControl
	for i := 0; i < len(b); {
		var name, value []byte
		name, value, i = nextDirective(b, i)
		s.apply(name, value)
	}
	return s
}

func (s *SurrogateControl) apply(name, v []byte) {
	switch {
	case eqFold(name, "no-store"):
		s.NoStore = true
	case eqFold(name, "max-age"):
		if !s.HasMaxAge {
			s.setMaxAge(v)
		}
	case eqFold(name, "content"):
		s.ESI = s.ESI || listsESI(v)
	}
}

func (s *SurrogateControl) setMaxAge(v []byte) {
	v = trimQuotes(trimOWS(v))
	age, stale := v, []byte(nil)
	if i := bytes.IndexByte(v, '+'); i >= 0 {
		age, stale = v[:i], v[i+1:]
	}
	n, ok := parseSeconds(age)
	if !ok {
		return
	}
	s.MaxAge, s.HasMaxAge = n, true
	if m, ok := parseSeconds(stale); ok {
		s.Stale = m
	}
}

// listsESI reports whether a content="…" value names ESI/1.0 among its
// space-separated capabilities.
func listsESI(v []byte) bool {
	v = trimQuotes(trimOWS(v))
	for len(v) > 0 {
		end := bytes.IndexByte(v, ' ')
		if end < 0 {
			end = len(v)
		}
		if eqFold(v[:end], "esi/1.0") {
			return true
		}
		v = v[min(end+1, len(v)):]
	}
	return false
}
