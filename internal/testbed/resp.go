package testbed

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// redisDo sends one command on a new connection and returns its reply:
// the text of a simple string, bulk string or integer, and array elements
// joined by newlines. A Redis error reply is an error.
func redisDo(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", fmt.Errorf("testbed: redis: %w", err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return "", fmt.Errorf("testbed: redis: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		return "", fmt.Errorf("testbed: redis: %w", err)
	}
	return readRESP(bufio.NewReader(c), 0)
}

// readRESP reads one RESP2 reply.
func readRESP(br *bufio.Reader, depth int) (string, error) {
	if depth > 8 {
		return "", errors.New("testbed: RESP reply nested too deeply")
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("testbed: RESP: %w", err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", errors.New("testbed: empty RESP line")
	}
	switch body := line[1:]; line[0] {
	case '+', ':':
		return body, nil
	case '-':
		return "", fmt.Errorf("testbed: redis error: %s", body)
	case '$':
		return readBulk(br, body)
	case '*':
		return readArray(br, body, depth)
	}
	return "", fmt.Errorf("testbed: unexpected RESP line %q", line)
}

func readBulk(br *bufio.Reader, length string) (string, error) {
	n, err := strconv.Atoi(length)
	if err != nil {
		return "", fmt.Errorf("testbed: RESP bulk length %q: %w", length, err)
	}
	if n < 0 {
		return "", nil // nil bulk
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(br, buf); err != nil {
		return "", fmt.Errorf("testbed: RESP bulk: %w", err)
	}
	return string(buf[:n]), nil
}

func readArray(br *bufio.Reader, length string, depth int) (string, error) {
	n, err := strconv.Atoi(length)
	if err != nil {
		return "", fmt.Errorf("testbed: RESP array length %q: %w", length, err)
	}
	parts := make([]string, 0, max(n, 0))
	for range n {
		s, err := readRESP(br, depth+1)
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n"), nil
}
