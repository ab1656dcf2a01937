package phppool

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// HeaderField is one response header line, in the order the script sent it.
type HeaderField struct {
	Name, Value string
}

// MaxResponseHead bounds the CGI response head ReadResponseHead accepts.
const MaxResponseHead = 64 << 10

// ReadResponseHead reads the CGI response head from the start of a
// worker's STDOUT: header lines up to the blank line (CRLF or LF endings).
// The body follows in r. The Status header sets the status and is not
// returned among the fields; without it the status is 302 when Location is
// present (as nginx does) and 200 otherwise. Names keep the script's
// spelling; values are trimmed of surrounding spaces and tabs.
func ReadResponseHead(r *bufio.Reader) (status int, header []HeaderField, err error) {
	hasLocation := false
	total := 0
	for {
		line, err := readHeadLine(r, &total)
		if err != nil {
			return 0, nil, err
		}
		if len(line) == 0 {
			break
		}
		f, err := parseHeadLine(line)
		if err != nil {
			return 0, nil, err
		}
		switch {
		case strings.EqualFold(f.Name, "Status"):
			if status, err = parseStatus(f.Value); err != nil {
				return 0, nil, err
			}
			continue
		case strings.EqualFold(f.Name, "Location"):
			hasLocation = true
		}
		header = append(header, f)
	}
	if status == 0 {
		status = 200
		if hasLocation {
			status = 302
		}
	}
	return status, header, nil
}

// readHeadLine returns one line without its LF or CRLF ending.
func readHeadLine(r *bufio.Reader, total *int) ([]byte, error) {
	var long []byte // only for lines longer than r's buffer
	for {
		chunk, err := r.ReadSlice('\n')
		*total += len(chunk)
		if *total > MaxResponseHead {
			return nil, fmt.Errorf("phppool: response head over %d bytes: %w", MaxResponseHead, ErrResponseHead)
		}
		switch {
		case err == nil:
			line := chunk
			if long != nil {
				line = append(long, chunk...)
			}
			line = line[:len(line)-1]
			return bytes.TrimSuffix(line, []byte{'\r'}), nil
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, chunk...)
		default:
			return nil, fmt.Errorf("phppool: read response head: %w: %w", ErrResponseHead, err)
		}
	}
}

func parseHeadLine(line []byte) (HeaderField, error) {
	name, value, ok := bytes.Cut(line, []byte{':'})
	if !ok || len(name) == 0 {
		return HeaderField{}, fmt.Errorf("phppool: header line %.40q: %w", line, ErrResponseHead)
	}
	for _, c := range name {
		if !isTokenChar(c) {
			return HeaderField{}, fmt.Errorf("phppool: header name %.40q: %w", name, ErrResponseHead)
		}
	}
	value = bytes.Trim(value, " \t")
	for _, c := range value {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return HeaderField{}, fmt.Errorf("phppool: control byte in header %.40q: %w", name, ErrResponseHead)
		}
	}
	return HeaderField{Name: string(name), Value: string(value)}, nil
}

// parseStatus reads "404" or "404 Not Found".
func parseStatus(v string) (int, error) {
	code, _, _ := strings.Cut(v, " ")
	if len(code) != 3 || code[0] < '1' || code[0] > '9' ||
		code[1] < '0' || code[1] > '9' || code[2] < '0' || code[2] > '9' {
		return 0, fmt.Errorf("phppool: status %.40q: %w", v, ErrResponseHead)
	}
	return int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0'), nil
}

// isTokenChar reports whether c may appear in a header name (RFC 9110 tchar).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
