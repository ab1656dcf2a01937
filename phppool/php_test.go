package phppool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

const testScript = `<?php
if (isset($_GET['missing'])) { http_response_code(404); echo "no such thing"; exit; }
header('X-Seq: ' . $_GET['i']);
error_log('seq ' . $_GET['i']);
echo 'hello ', $_SERVER['REQUEST_METHOD'], ' ', $_GET['i'], ' ', strlen(file_get_contents('php://input'));
`

func TestPHPCGIServesManyRequestsOverOneConnection(t *testing.T) {
	addr := testbed.StartPHPCGI(t, 0)
	dir := t.TempDir()
	script := filepath.Join(dir, "index.php")
	if err := os.WriteFile(script, []byte(testScript), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 50 {
		method, body, query, wantStatus := "GET", "", fmt.Sprintf("i=%d", i), 200
		switch {
		case i%5 == 1:
			method, body = "POST", string(bytes.Repeat([]byte{'p'}, 1000+i))
		case i%7 == 3:
			query, wantStatus = "missing=1&i=0", 404
		}
		ps := []Param{
			{"GATEWAY_INTERFACE", "CGI/1.1"},
			{"SCRIPT_FILENAME", script},
			{"SCRIPT_NAME", "/index.php"},
			{"DOCUMENT_ROOT", dir},
			{"REQUEST_METHOD", method},
			{"REQUEST_URI", "/index.php?" + query},
			{"QUERY_STRING", query},
			{"SERVER_PROTOCOL", "HTTP/1.1"},
			{"SERVER_NAME", "example.test"},
			{"SERVER_PORT", "80"},
			{"REMOTE_ADDR", "127.0.0.1"},
			{"REDIRECT_STATUS", "200"},
			{"CONTENT_LENGTH", strconv.Itoa(len(body))},
			{"CONTENT_TYPE", "application/octet-stream"},
			{"HTTP_HOST", "example.test"},
		}
		var out, errOut bytes.Buffer
		var stdin *bytes.Reader
		if body != "" {
			stdin = bytes.NewReader([]byte(body))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var app int
		if stdin != nil {
			app, err = c.Do(ctx, ps, stdin, &out, &errOut)
		} else {
			app, err = c.Do(ctx, ps, nil, &out, &errOut)
		}
		cancel()
		if err != nil {
			t.Fatalf("request %d: %v (stderr %q)", i, err, errOut.String())
		}
		status, header, got := splitResponse(t, out.Bytes())
		if app != 0 || status != wantStatus {
			t.Fatalf("request %d: app status %d, HTTP %d; want 0, %d", i, app, status, wantStatus)
		}
		want := fmt.Sprintf("hello %s %d %d", method, i, len(body))
		if wantStatus == 404 {
			want = "no such thing"
		} else {
			if !hasField(header, "X-Seq", strconv.Itoa(i)) {
				t.Fatalf("request %d: header %q lacks X-Seq", i, header)
			}
			if !bytes.Contains(errOut.Bytes(), []byte(fmt.Sprintf("seq %d", i))) {
				t.Fatalf("request %d: stderr %q lacks the error_log line", i, errOut.String())
			}
		}
		if string(got) != want {
			t.Fatalf("request %d: body %q, want %q", i, got, want)
		}
	}
	if c.Broken() {
		t.Fatal("connection broken after 50 requests")
	}
}

func hasField(h []HeaderField, name, value string) bool {
	for _, f := range h {
		if f.Name == name && f.Value == value {
			return true
		}
	}
	return false
}
