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

// Device is the name ramjet gives itself in the Surrogate-Capability
// request field; Surrogate-Control directives targeted at it
// ("max-age=60;ramjet") are addressed to it.
const Device = "ramjet"

// ParseSurrogateControl parses b: no-store, max-age=N[+M] (first valid one
// counts) and content="…" listing ESI/1.0. A directive targeted at Device
// wins over an untargeted one; one targeted at another device is not
// addressed to us and does not match (Edge Architecture 1.0).
func ParseSurrogateControl(b []byte) SurrogateControl {
	var s SurrogateControl
	for _, targeted := range [2]bool{true, false} {
		for i := 0; i < len(b); {
			var name, value []byte
			name, value, i = nextDirective(b, i)
			name, value, device := cutDevice(name, value)
			if (device != nil) == targeted && (device == nil || eqFold(device, Device)) {
				s.apply(name, value)
			}
		}
	}
	return s
}

// cutDevice splits a directive's ";device" target off its value (or off
// its name, for one without a value).
func cutDevice(name, value []byte) (n, v, device []byte) {
	if value == nil {
		if i := bytes.IndexByte(name, ';'); i >= 0 {
			return trimOWS(name[:i]), nil, trimOWS(name[i+1:])
		}
		return name, nil, nil
	}
	if i := bytes.LastIndexByte(value, ';'); i >= 0 && !bytes.ContainsRune(value[i:], '"') {
		return name, trimOWS(value[:i]), trimOWS(value[i+1:])
	}
	return name, value, nil
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
