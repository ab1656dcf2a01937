package waf

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

// TestOCSFAuditRecordKeepsItsFields: ramjet writes no audit log (it
// never runs Coraza's logging phase), but Coraza's OCSF audit format
// still compiles against third_party/ocsf-schema-golang, plain structs
// in place of the original protobuf messages; run by hand, its record is
// OCSF's Web Resources Activity under OCSF's field names.
func TestOCSFAuditRecordKeepsItsFields(t *testing.T) {
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.log")
	rules := filepath.Join(dir, "audit.conf")
	conf := "SecAuditEngine On\nSecAuditLogType Serial\nSecAuditLogFormat ocsf\nSecAuditLogParts ABHKZ\nSecAuditLog " + audit + "\n" + markerRule
	if err := os.WriteFile(rules, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewLibrary().Get(Rules{After: []string{rules}})
	if err != nil {
		t.Fatal(err)
	}
	req := parseRaw(t, "GET /p?a="+marker+" HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: probe/1\r\n\r\n")
	tx, v := s.Inspect(&Request{Req: req, Client: netip.MustParseAddr("192.0.2.1"), ClientPort: 40000, Server: netip.MustParseAddrPort("127.0.0.1:80")})
	tx.tx.ProcessLogging()
	tx.Close()
	if !v.Stop {
		t.Fatalf("the marker was not stopped: %+v", v)
	}
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		ClassUID    int    `json:"class_uid"`
		ActionID    int    `json:"action_id"`
		Action      string `json:"action"`
		HTTPRequest struct {
			Method    string `json:"http_method"`
			UserAgent string `json:"user_agent"`
			URL       struct {
				URLString string `json:"url_string"`
			} `json:"url"`
		} `json:"http_request"`
		Src struct {
			IP string `json:"ip"`
		} `json:"src_endpoint"`
		Enrichments []struct {
			Name string `json:"name"`
		} `json:"enrichments"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("audit record %q: %v", b, err)
	}
	// 6001: Web Resources Activity; action 2: denied.
	if rec.ClassUID != 6001 || rec.ActionID != 2 || rec.Action != "Denied" || rec.HTTPRequest.Method != "GET" ||
		rec.HTTPRequest.UserAgent != "probe/1" || rec.HTTPRequest.URL.URLString != "/p?a="+marker ||
		rec.Src.IP != "192.0.2.1" || len(rec.Enrichments) == 0 {
		t.Errorf("audit record lost OCSF fields: %+v\n%s", rec, b)
	}
}
