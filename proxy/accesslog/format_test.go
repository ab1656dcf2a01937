package accesslog

import (
	"encoding/json"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

var testTime = time.Date(2026, 12, 1, 18, 16, 5, 123456789, time.FixedZone("", 3600))

func hitRecord() Record {
	return Record{
		Time: testTime, Addr: net.IPv4(203, 0, 113, 7), Method: []byte("GET"),
		URI: []byte("/page?utm_source=x&a=1"), Protocol: []byte("HTTP/1.1"), Status: 200, Bytes: 725,
		Referer: []byte("https://example.com/"), UserAgent: []byte("curl/8.4.0"),
		CacheStatus: []byte("ramjet; hit"), RequestTime: 42 * time.Microsecond, OriginTime: -1,
		Site: []byte("example.com"),
	}
}

func TestFormatsWriteOneLineEach(t *testing.T) {
	miss := hitRecord()
	miss.CacheStatus, miss.OriginTime, miss.RequestTime = []byte("ramjet; fwd=miss; stored"), 1500*time.Millisecond, 1501234*time.Microsecond
	stream := hitRecord()
	stream.Bytes, stream.Referer, stream.UserAgent, stream.CacheStatus, stream.Site = -1, nil, nil, nil, nil
	stream.Addr = net.ParseIP("2001:db8::1")
	blocked := hitRecord()
	blocked.Status, blocked.CacheStatus = 403, nil
	blocked.WAF = &WAF{Outcome: "blocked", Score: 10, Rules: []int{942100, 942190}, Data: `ARGS:id=1" or 1=1`}
	unsplit := Record{Time: testTime, Addr: net.IPv4(203, 0, 113, 7), Line: []byte("GARBAGE\x01"), Status: 400, Bytes: 12, OriginTime: -1}
	noLine := unsplit
	noLine.Line, noLine.Status = nil, 408
	tests := []struct {
		name string
		f    Format
		rec  Record
		want string
	}{
		{"combined refused line as received", Combined, unsplit,
			`203.0.113.7 - - [01/Dec/2026:18:16:05 +0100] "GARBAGE\x01" 400 12 "-" "-"`},
		{"combined refused without a line", Combined, noLine,
			`203.0.113.7 - - [01/Dec/2026:18:16:05 +0100] "-" 408 12 "-" "-"`},
		{"json refused line as received", JSON, unsplit,
			`{"time":"2026-12-01T18:16:05.123+01:00","remote_addr":"203.0.113.7","request_method":"","request_uri":"GARBAGE\u0001","server_protocol":"","status":400,"body_bytes_sent":12,"http_referer":"","http_user_agent":"","cache_status":"","request_time":0.000000,"origin_time":null,"site":"","waf":null}`},
		{"combined hit", Combined, hitRecord(),
			`203.0.113.7 - - [01/Dec/2026:18:16:05 +0100] "GET /page?utm_source=x&a=1 HTTP/1.1" 200 725 "https://example.com/" "curl/8.4.0"`},
		{"combined without referer, agent or length", Combined, stream,
			`2001:db8::1 - - [01/Dec/2026:18:16:05 +0100] "GET /page?utm_source=x&a=1 HTTP/1.1" 200 - "-" "-"`},
		{"ramjet hit", Ramjet, hitRecord(),
			`203.0.113.7 - - [01/Dec/2026:18:16:05 +0100] "GET /page?utm_source=x&a=1 HTTP/1.1" 200 725 "https://example.com/" "curl/8.4.0" "ramjet; hit" 0.000042 - example.com`},
		{"ramjet miss", Ramjet, miss,
			`203.0.113.7 - - [01/Dec/2026:18:16:05 +0100] "GET /page?utm_source=x&a=1 HTTP/1.1" 200 725 "https://example.com/" "curl/8.4.0" "ramjet; fwd=miss; stored" 1.501234 1.500000 example.com`},
		{"ramjet error without cache status or site", Ramjet, stream,
			`2001:db8::1 - - [01/Dec/2026:18:16:05 +0100] "GET /page?utm_source=x&a=1 HTTP/1.1" 200 - "-" "-" "-" 0.000042 - -`},
		{"json hit", JSON, hitRecord(),
			`{"time":"2026-12-01T18:16:05.123+01:00","remote_addr":"203.0.113.7","request_method":"GET","request_uri":"/page?utm_source=x&a=1","server_protocol":"HTTP/1.1","status":200,"body_bytes_sent":725,"http_referer":"https://example.com/","http_user_agent":"curl/8.4.0","cache_status":"ramjet; hit","request_time":0.000042,"origin_time":null,"site":"example.com","waf":null}`},
		{"json without referer, agent or length", JSON, stream,
			`{"time":"2026-12-01T18:16:05.123+01:00","remote_addr":"2001:db8::1","request_method":"GET","request_uri":"/page?utm_source=x&a=1","server_protocol":"HTTP/1.1","status":200,"body_bytes_sent":null,"http_referer":"","http_user_agent":"","cache_status":"","request_time":0.000042,"origin_time":null,"site":"","waf":null}`},
		{"ramjet blocked by the waf", Ramjet, blocked,
			`203.0.113.7 - - [01/Dec/2026:18:16:05 +0100] "GET /page?utm_source=x&a=1 HTTP/1.1" 403 725 "https://example.com/" "curl/8.4.0" "-" 0.000042 - example.com "waf=blocked score=10 rules=942100,942190 data=ARGS:id=1\x22 or 1=1"`},
		{"json blocked by the waf", JSON, blocked,
			`{"time":"2026-12-01T18:16:05.123+01:00","remote_addr":"203.0.113.7","request_method":"GET","request_uri":"/page?utm_source=x&a=1","server_protocol":"HTTP/1.1","status":403,"body_bytes_sent":725,"http_referer":"https://example.com/","http_user_agent":"curl/8.4.0","cache_status":"","request_time":0.000042,"origin_time":null,"site":"example.com","waf":{"outcome":"blocked","score":10,"rules":[942100,942190],"data":"ARGS:id=1\" or 1=1"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.f.Append(nil, &tt.rec))
			if got != tt.want+"\n" {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestCombinedEscapesAsNginx: what a client sends cannot end a line or a
// quoted field; bytes are written as nginx writes them (\xHH, upper case).
func TestCombinedEscapesAsNginx(t *testing.T) {
	rec := hitRecord()
	rec.URI = []byte("/a\"b\\c\x01\x7f")
	rec.UserAgent = []byte("Mozilla \"x\"\nnext café")
	got := string(Combined.Append(nil, &rec))
	want := `203.0.113.7 - - [01/Dec/2026:18:16:05 +0100] "GET /a\x22b\x5Cc\x01\x7F HTTP/1.1" 200 725 "https://example.com/" "Mozilla \x22x\x22\x0Anext caf\xC3\xA9"` + "\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Count(got, "\n") != 1 {
		t.Errorf("line breaks inside the line: %q", got)
	}
}

// TestJSONLinesParseWhateverTheClientSent: quotes, control characters and
// invalid UTF-8 still give one valid object per line.
func TestJSONLinesParseWhateverTheClientSent(t *testing.T) {
	rec := hitRecord()
	rec.URI = []byte("/a\"b\\c\x01\x7f\xff/é")
	rec.UserAgent = []byte("line\nbreak\t\"quoted\"")
	line := JSON.Append(nil, &rec)
	var got map[string]any
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("line does not parse: %v\n%s", err, line)
	}
	if got["request_uri"] != "/a\"b\\c\x01\x7f\ufffd/é" || got["http_user_agent"] != "line\nbreak\t\"quoted\"" {
		t.Errorf("fields read back as %q and %q", got["request_uri"], got["http_user_agent"])
	}
	var keys []string
	dec := json.NewDecoder(strings.NewReader(string(line)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(keys, JSONFields) {
		t.Errorf("fields %v, want %v", keys, JSONFields)
	}
}

func TestIPv4MappedAddressIsWrittenDotted(t *testing.T) {
	rec := hitRecord()
	rec.Addr = net.ParseIP("::ffff:192.0.2.1")
	if got := string(Combined.Append(nil, &rec)); !strings.HasPrefix(got, "192.0.2.1 - - [") {
		t.Errorf("line starts %q", got[:20])
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range []Format{Combined, Ramjet, JSON} {
		got, err := ParseFormat(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), got, err)
		}
	}
	if _, err := ParseFormat("common"); err == nil {
		t.Error("ParseFormat(common) did not fail")
	}
}

// TestTimesAreWrittenAsTimeFormatWouldWriteThem: the hand-written time
// fields match the layouts, over zones west and east and every month.
func TestTimesAreWrittenAsTimeFormatWouldWriteThem(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("", -(9*3600 + 30*60)), time.FixedZone("", 5*3600+45*60)}
	for _, z := range zones {
		for m := range 12 {
			tm := time.Date(2026, time.Month(m+1), 9+m, m, 2*m, 59-m, m*83e6+999, z)
			if got, want := string(appendTimeLocal(nil, tm)), tm.Format("02/Jan/2006:15:04:05 -0700"); got != want {
				t.Errorf("time_local %q, want %q", got, want)
			}
			if got, want := string(appendTimeISO(nil, tm)), tm.Format("2006-01-02T15:04:05.000-07:00"); got != want {
				t.Errorf("time_iso8601 %q, want %q", got, want)
			}
		}
	}
}
