package policy

// A targeted cache-control field (RFC 9213) is a Structured Field
// Dictionary (RFC 8941 4.2.2); one that does not parse as one, or whose
// lifetimes are not integers, is ignored as a whole and Cache-Control
// governs instead.

// validTargeted reports whether b is a valid targeted field value.
func validTargeted(b []byte) bool {
	p := sfParser{b: b}
	p.ows()
	if p.done() {
		return false
	}
	for {
		key, ok := p.key()
		if !ok {
			return false
		}
		kind := sfBoolean // a member without "=" is true
		if p.peek('=') {
			p.i++
			if kind, ok = p.memberValue(); !ok {
				return false
			}
		} else if !p.parameters() {
			return false
		}
		if lifetimeKey(key) && kind != sfInteger {
			return false
		}
		p.ows()
		if p.done() {
			return true
		}
		if !p.peek(',') {
			return false
		}
		p.i++
		p.ows()
		if p.done() {
			return false // a trailing comma
		}
	}
}

func lifetimeKey(k []byte) bool {
	switch string(k) {
	case "max-age", "s-maxage", "stale-while-revalidate", "stale-if-error":
		return true
	}
	return false
}

type sfKind uint8

const (
	sfInteger sfKind = iota
	sfDecimal
	sfString
	sfToken
	sfBinary
	sfBoolean
	sfInnerList
)

type sfParser struct {
	b []byte
	i int
}

func (p *sfParser) done() bool       { return p.i >= len(p.b) }
func (p *sfParser) peek(c byte) bool { return p.i < len(p.b) && p.b[p.i] == c }
func (p *sfParser) ows() {
	for p.i < len(p.b) && isOWS(p.b[p.i]) {
		p.i++
	}
}
func (p *sfParser) spaces() {
	for p.peek(' ') {
		p.i++
	}
}

// key consumes a key: lcalpha or "*", then lcalpha, digits, "_-.*".
func (p *sfParser) key() ([]byte, bool) {
	start := p.i
	if p.done() || !(isLCAlpha(p.b[p.i]) || p.b[p.i] == '*') {
		return nil, false
	}
	for p.i++; p.i < len(p.b); p.i++ {
		c := p.b[p.i]
		if !isLCAlpha(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' && c != '*' {
			break
		}
	}
	return p.b[start:p.i], true
}

func (p *sfParser) memberValue() (sfKind, bool) {
	if p.peek('(') {
		return sfInnerList, p.innerList()
	}
	kind, ok := p.bareItem()
	return kind, ok && p.parameters()
}

func (p *sfParser) innerList() bool {
	p.i++ // "("
	for {
		p.spaces()
		if p.peek(')') {
			p.i++
			return p.parameters()
		}
		if _, ok := p.bareItem(); !ok || !p.parameters() {
			return false
		}
		if !p.peek(' ') && !p.peek(')') {
			return false
		}
	}
}

// parameters consumes *( ";" *SP key [ "=" bare-item ] ).
func (p *sfParser) parameters() bool {
	for p.peek(';') {
		p.i++
		p.spaces()
		if _, ok := p.key(); !ok {
			return false
		}
		if p.peek('=') {
			p.i++
			if _, ok := p.bareItem(); !ok {
				return false
			}
		}
	}
	return true
}

func (p *sfParser) bareItem() (sfKind, bool) {
	if p.done() {
		return 0, false
	}
	switch c := p.b[p.i]; {
	case c == '-' || isDigit(c):
		return p.number()
	case c == '"':
		return sfString, p.str()
	case c == ':':
		return sfBinary, p.binary()
	case c == '?':
		ok := p.i+1 < len(p.b) && (p.b[p.i+1] == '0' || p.b[p.i+1] == '1')
		p.i += 2
		return sfBoolean, ok
	case isAlpha(c) || c == '*':
		p.token()
		return sfToken, true
	}
	return 0, false
}

// number consumes an sf-integer (up to 15 digits) or sf-decimal (12.3).
func (p *sfParser) number() (sfKind, bool) {
	if p.peek('-') {
		p.i++
	}
	intDigits := p.digits()
	if !p.peek('.') {
		return sfInteger, intDigits >= 1 && intDigits <= 15
	}
	p.i++
	frac := p.digits()
	return sfDecimal, intDigits >= 1 && intDigits <= 12 && frac >= 1 && frac <= 3
}

func (p *sfParser) digits() int {
	start := p.i
	for p.i < len(p.b) && isDigit(p.b[p.i]) {
		p.i++
	}
	return p.i - start
}

func (p *sfParser) str() bool {
	for p.i++; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '\\':
			p.i++
			if p.i >= len(p.b) || p.b[p.i] != '"' && p.b[p.i] != '\\' {
				return false
			}
		case c == '"':
			p.i++
			return true
		case c < 0x20 || c > 0x7e:
			return false
		}
	}
	return false
}

func (p *sfParser) binary() bool {
	for p.i++; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == ':':
			p.i++
			return true
		case !isAlpha(c) && !isDigit(c) && c != '+' && c != '/' && c != '=':
			return false
		}
	}
	return false
}

func (p *sfParser) token() {
	for p.i++; p.i < len(p.b); p.i++ {
		if c := p.b[p.i]; !isTChar(c) && c != ':' && c != '/' {
			return
		}
	}
}

func isLCAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool   { return isLCAlpha(c) || 'A' <= c && c <= 'Z' }

// isTChar is RFC 9110's tchar.
func isTChar(c byte) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
