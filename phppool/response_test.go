package phppool

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestReadResponseHead(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		status int
		header []HeaderField
		body   string
	}{
		{"no status means 200", "Content-Type: text/html\r\n\r\nhi", 200,
			[]HeaderField{{"Content-Type", "text/html"}}, "hi"},
		{"status header sets code and is dropped", "Status: 404 Not Found\r\nX-A: 1\r\n\r\nnope", 404,
			[]HeaderField{{"X-A", "1"}}, "nope"},
		{"status without reason", "status: 503\n\n", 503, nil, ""},
		{"location without status redirects", "Location: /elsewhere\r\n\r\n", 302,
			[]HeaderField{{"Location", "/elsewhere"}}, ""},
		{"explicit status wins over location", "Location: https://x/\r\nStatus: 301 Moved\r\n\r\n", 301,
			[]HeaderField{{"Location", "https://x/"}}, ""},
		{"bare LF endings and repeated names keep order", "Set-Cookie: a=1\nSet-Cookie: b=2\n\nbody\r\n", 200,
			[]HeaderField{{"Set-Cookie", "a=1"}, {"Set-Cookie", "b=2"}}, "body\r\n"},
		{"values are trimmed", "X-Y:   spaced \t\r\n\r\n", 200, []HeaderField{{"X-Y", "spaced"}}, ""},
		{"empty head", "\r\nbody", 200, nil, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tt.in))
			status, header, err := ReadResponseHead(r)
			if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || !reflect.DeepEqual(header, tt.header) {
				t.Fatalf("got %d %q, want %d %q", status, header, tt.status, tt.header)
			}
			body, _ := io.ReadAll(r)
			if string(body) != tt.body {
				t.Fatalf("body %q, want %q", body, tt.body)
			}
		})
	}
}

func TestReadResponseHeadRejectsMalformedHead(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"line without colon", "garbage\r\n\r\n"},
		{"empty name", ": v\r\n\r\n"},
		{"space in name", "Bad Name: v\r\n\r\n"},
		{"status not three digits", "Status: 20\r\n\r\n"},
		{"status not a number", "Status: OK\r\n\r\n"},
		{"control byte in value", "X: a\x00b\r\n\r\n"},
		{"no blank line before EOF", "X: 1\r\n"},
		{"empty output", ""},
		{"head too long", "X: " + strings.Repeat("a", MaxResponseHead) + "\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadResponseHead(bufio.NewReaderSize(strings.NewReader(tt.in), 16))
			if !errors.Is(err, ErrResponseHead) {
				t.Fatalf("err = %v, want ErrResponseHead", err)
			}
		})
	}
}

func FuzzReadResponseHead(f *testing.F) {
	f.Add("Status: 404 Not Found\r\nContent-Type: text/html\r\n\r\nbody")
	f.Add("Location: /x\n\n")
	f.Add("X-A: 1\r\nX-A: 2\r\n\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		status, header, err := ReadResponseHead(bufio.NewReaderSize(strings.NewReader(in), 16))
		if err != nil {
			return
		}
		if status < 100 || status > 999 {
			t.Fatalf("status %d out of range", status)
		}
		// Serialising what was parsed and parsing it again gives the same head.
		var b strings.Builder
		b.WriteString("Status: ")
		b.WriteString(itoa3(status))
		b.WriteString("\n")
		for _, f := range header {
			b.WriteString(f.Name + ": " + f.Value + "\n")
		}
		b.WriteString("\n")
		status2, header2, err := ReadResponseHead(bufio.NewReader(strings.NewReader(b.String())))
		if err != nil {
			t.Fatalf("reparse %q: %v", b.String(), err)
		}
		if status2 != status || len(header2) != len(header) || (len(header) > 0 && !reflect.DeepEqual(header, header2)) {
			t.Fatalf("reparse changed %d %q to %d %q", status, header, status2, header2)
		}
	})
}

func itoa3(n int) string {
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}
