package phppool

import (
	"encoding/binary"
	"fmt"
)

// Param is one FastCGI name-value pair (a CGI variable such as
// SCRIPT_FILENAME or HTTP_HOST). Order is kept as given.
type Param struct {
	Name, Value string
}

// maxPairLen is the largest name or value length the 4-byte form encodes.
const maxPairLen = 1<<31 - 1

// AppendParam appends p encoded as a FastCGI name-value pair: each length
// in one byte if below 128, else in four bytes with the high bit set.
func AppendParam(dst []byte, p Param) ([]byte, error) {
	if len(p.Name) > maxPairLen || len(p.Value) > maxPairLen {
		return dst, fmt.Errorf("phppool: param %.32q longer than %d bytes: %w", p.Name, maxPairLen, ErrParams)
	}
	dst = appendPairLen(dst, len(p.Name))
	dst = appendPairLen(dst, len(p.Value))
	dst = append(dst, p.Name...)
	return append(dst, p.Value...), nil
}

func appendPairLen(dst []byte, n int) []byte {
	if n < 128 {
		return append(dst, byte(n))
	}
	return binary.BigEndian.AppendUint32(dst, uint32(n)|1<<31)
}

// EncodeParams encodes ps as one name-value pair stream.
func EncodeParams(ps []Param) ([]byte, error) {
	var b []byte
	for _, p := range ps {
		var err error
		if b, err = AppendParam(b, p); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// DecodeParams decodes a complete name-value pair stream. Lengths that
// run past the end of b are an error wrapping ErrParams.
func DecodeParams(b []byte) ([]Param, error) {
	var ps []Param
	for len(b) > 0 {
		nl, rest, err := readPairLen(b)
		if err != nil {
			return nil, err
		}
		vl, rest, err := readPairLen(rest)
		if err != nil {
			return nil, err
		}
		if uint64(nl)+uint64(vl) > uint64(len(rest)) {
			return nil, fmt.Errorf("phppool: pair of %d+%d bytes with %d left: %w", nl, vl, len(rest), ErrParams)
		}
		ps = append(ps, Param{Name: string(rest[:nl]), Value: string(rest[nl : nl+vl])})
		b = rest[nl+vl:]
	}
	return ps, nil
}

func readPairLen(b []byte) (int, []byte, error) {
	if len(b) == 0 {
		return 0, nil, fmt.Errorf("phppool: pair length missing: %w", ErrParams)
	}
	if b[0] < 128 {
		return int(b[0]), b[1:], nil
	}
	if len(b) < 4 {
		return 0, nil, fmt.Errorf("phppool: 4-byte pair length truncated: %w", ErrParams)
	}
	return int(binary.BigEndian.Uint32(b) &^ (1 << 31)), b[4:], nil
}
