package proxy

import "bytes"

// eachCookie calls f for each name=value pair of a Cookie header until f
// returns false. It never allocates.
func eachCookie(header []byte, f func(name, value []byte) bool) {
	for len(header) > 0 {
		var pair []byte
		if i := bytes.IndexByte(header, ';'); i >= 0 {
			pair, header = header[:i], header[i+1:]
		} else {
			pair, header = header, nil
		}
		pair = bytes.TrimSpace(pair)
		if len(pair) == 0 {
			continue
		}
		name, value := pair, []byte(nil)
		if i := bytes.IndexByte(pair, '='); i >= 0 {
			name, value = bytes.TrimSpace(pair[:i]), bytes.TrimSpace(pair[i+1:])
		}
		if !f(name, value) {
			return
		}
	}
}

// hasCookie reports whether any cookie name in header matches p.
func hasCookie(header []byte, p *patterns) bool {
	found := false
	eachCookie(header, func(name, _ []byte) bool {
		found = p.match(name)
		return !found
	})
	return found
}

// cookieValue returns the value of the named cookie, or nil.
func cookieValue(header []byte, name string) []byte {
	var v []byte
	eachCookie(header, func(n, value []byte) bool {
		if string(n) == name {
			v = value
			return false
		}
		return true
	})
	return v
}
