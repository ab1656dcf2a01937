package htaccess

import (
	"encoding/base64"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
)

const htpasswdFile = `alice:$2y$05$5plduZUS7FZDy9xLB5/wcevkyaDFwBbT//BRmRdsDUfEeilKvW9zG
bob:$apr1$I1UkS9PS$MZWZuYG26JHi.blv9QTEs1
carol:{SHA}3jlYfsnWMi7F2C1+fdQaJ5Rr39M=
dave:$1$saltsalt$DoPDqEvtl7sTRDfUfLChZ1
`

func basic(user, pass string) hdr {
	return hdr{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
}

func TestAccessControl(t *testing.T) {
	files := map[string]string{
		"deny/.htaccess":      "Order deny,allow\nDeny from all\n",
		"allowip/.htaccess":   "Order allow,deny\nAllow from 203.0.113.0/24\n",
		"allowmask/.htaccess": "Order deny,allow\nDeny from all\nAllow from 203.0.113.0/255.255.255.0\n",
		"partial/.htaccess":   "Order deny,allow\nDeny from 203.0\n",
		"other/.htaccess":     "Order allow,deny\nAllow from 10.0.0.1\n",
		"denied/.htaccess":    "Require all denied\n",
		"granted/.htaccess":   "Require all granted\n",
		"reqip/.htaccess":     "Require ip 203.0.113.7\n",
		"reqip2/.htaccess":    "Require ip 10.0.0.0/8 192.168.1\n",
		"all/.htaccess":       "<RequireAll>\nRequire all granted\nRequire not ip 203.0.113.7\n</RequireAll>\n",
		"any/.htaccess":       "<RequireAny>\nRequire ip 10.0.0.1\nRequire method GET\n</RequireAny>\n",
		"envok/.htaccess":     "SetEnvIf User-Agent ^Good GOOD\nOrder deny,allow\nDeny from all\nAllow from env=GOOD\n",
		"limit/.htaccess":     "<Limit POST PUT>\nOrder deny,allow\nDeny from all\n</Limit>\n",
		"limitx/.htaccess":    "<LimitExcept GET>\nRequire all denied\n</LimitExcept>\n",
		"files/.htaccess":     "<Files \".user.ini\">\nOrder allow,deny\nDeny from all\n</Files>\n<FilesMatch \"\\.(log|sql)$\">\nRequire all denied\n</FilesMatch>\n",
		"uploads/.htaccess":   "<Files *.php>\nOrder Deny,Allow\nDeny from all\n</Files>\n",
		"host/.htaccess":      "Order deny,allow\nDeny from evil.example\n",
		"reqhost/.htaccess":   "Require host example.com\n",
		"group/.htaccess":     "AuthType Basic\nAuthName x\nAuthUserFile /dev/null\nRequire group admins\n",
		"expr/.htaccess":      "<If \"%{REMOTE_ADDR} == '10.0.0.1'\">\nRequire all denied\n</If>\n",
		"digest/.htaccess":    "AuthType Digest\nRequire valid-user\n",
		"ssl/.htaccess":       "SSLRequireSSL\n",
		"sslreq/.htaccess":    "SSLRequire %{SSL_CIPHER_USEKEYSIZE} >= 128\n",
		"deny/sub/.htaccess":  "RewriteEngine On\n",
		"deny/open/.htaccess": "Allow from all\n",
		"files/ok.txt":        "", "files/.user.ini": "", "files/x.log": "",
	}
	tr, _ := newTree(t, files)
	tests := []struct {
		line   string
		status int
	}{
		{"GET /deny/x", 403},
		{"GET /deny/sub/x", 403},  // no access directive there: the parent's apply
		{"GET /deny/open/x", 0},   // an Allow there replaces the parent's rules whole
		{"GET /allowip/x", 0},     // 203.0.113.7 is in the network
		{"GET /allowmask/x", 0},   // dotted mask
		{"GET /partial/x", 403},   // partial address
		{"GET /other/x", 403},     // allow,deny: not allowed is denied
		{"GET /denied/x", 403},    //
		{"GET /granted/x", 0},     //
		{"GET /reqip/x", 0},       //
		{"GET /reqip2/x", 403},    //
		{"GET /all/x", 403},       // RequireAll with a negation that matches
		{"GET /any/x", 0},         // method GET grants
		{"POST /any/x", 403},      //
		{"GET /envok/x", 403},     // no env
		{"GET /limit/x", 0},       // GET is not limited
		{"POST /limit/x", 403},    //
		{"GET /limitx/x", 0},      //
		{"DELETE /limitx/x", 403}, //
		{"GET /files/ok.txt", 0},  //
		{"GET /files/.user.ini", 403},
		{"GET /files/x.log", 403},
		{"GET /uploads/evil.php", 403},
		{"GET /uploads/photo.jpg", 0},
		{"GET /host/x", 403},    // host names cannot be checked: fail closed
		{"GET /reqhost/x", 403}, // Require host: fail closed
		{"GET /group/x", 403},   // Require group: fail closed
		{"GET /expr/x", 403},    // access control in <If>: fail closed
		{"GET /digest/x", 403},  // AuthType Digest: fail closed
		{"GET /ssl/x", 403},     // SSLRequireSSL over plain HTTP
		{"GET /sslreq/x", 403},  // SSLRequire: fail closed
	}
	for _, tt := range tests {
		o := eval(t, tr, tt.line, nil)
		if o.Status != tt.status {
			t.Errorf("%s: status %d, want %d (%s)", tt.line, o.Status, tt.status, o.Cause)
		}
	}
	if o := eval(t, tr, "GET /envok/x", hdr{"User-Agent": "GoodBot"}); o.Status != 0 {
		t.Errorf("Allow from env=: %d (%s)", o.Status, o.Cause)
	}
	tls, o := request("GET /ssl/x", nil), &Outcome{}
	tls.HTTPS = true
	if tr.Eval(tls, o); o.Status != 0 {
		t.Errorf("SSLRequireSSL over TLS: %d", o.Status)
	}
	if o := eval(t, tr, "GET /host/x", nil); !strings.Contains(o.Cause, "host/.htaccess:2") {
		t.Errorf("fail-closed cause %q lacks FILE:LINE", o.Cause)
	}
}

func TestBasicAuth(t *testing.T) {
	tr, _ := newTree(t, map[string]string{".htpasswd-store/users": htpasswdFile})
	pw := filepath.Join(tr.Root(), ".htpasswd-store/users")
	write := func(dir, body string) {
		writeFile(t, filepath.Join(tr.Root(), dir, ".htaccess"), body)
	}
	write("private", "AuthType Basic\nAuthName \"Members only\"\nAuthUserFile "+pw+"\nRequire valid-user\n")
	write("bobonly", "AuthType Basic\nAuthName Bob\nAuthUserFile "+pw+"\nRequire user bob\n")
	write("either", "Order deny,allow\nDeny from all\nAllow from 10.0.0.0/8\nAuthType Basic\nAuthName E\nAuthUserFile "+pw+"\nRequire valid-user\nSatisfy Any\n")
	write("nofile", "AuthType Basic\nRequire valid-user\n")
	tests := []struct {
		name, line string
		h          hdr
		status     int
		user       string
	}{
		{"no credentials", "GET /private/x", nil, 401, ""},
		{"bcrypt", "GET /private/x", basic("alice", "s3cret"), 0, "alice"},
		{"apr1", "GET /private/x", basic("bob", "hunter2"), 0, "bob"},
		{"sha1", "GET /private/x", basic("carol", "pa55"), 0, "carol"},
		{"md5-crypt", "GET /private/x", basic("dave", "opensesame"), 0, "dave"},
		{"wrong password", "GET /private/x", basic("alice", "nope"), 401, ""},
		{"unknown user", "GET /private/x", basic("mallory", "x"), 401, ""},
		{"garbage header", "GET /private/x", hdr{"Authorization": "Basic !!!"}, 401, ""},
		{"user list, other user", "GET /bobonly/x", basic("alice", "s3cret"), 401, ""},
		{"user list, listed user", "GET /bobonly/x", basic("bob", "hunter2"), 0, "bob"},
		{"satisfy any: neither", "GET /either/x", nil, 401, ""},
		{"satisfy any: password", "GET /either/x", basic("carol", "pa55"), 0, "carol"},
		{"no AuthUserFile", "GET /nofile/x", basic("carol", "pa55"), 500, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := eval(t, tr, tt.line, tt.h)
			if o.Status != tt.status || o.User != tt.user {
				t.Fatalf("status %d user %q, want %d %q (%s)", o.Status, o.User, tt.status, tt.user, o.Cause)
			}
			if o.Status == 401 && tt.line == "GET /private/x" && o.Realm != "Members only" {
				t.Fatalf("realm %q", o.Realm)
			}
		})
	}
	r := request("GET /either/x", nil)
	r.Client = netip.MustParseAddr("10.1.2.3")
	o := &Outcome{}
	tr.Eval(r, o)
	if o.Status != 0 {
		t.Fatalf("satisfy any from an allowed address: %d", o.Status)
	}
}

func TestPasswordSchemes(t *testing.T) {
	pf := parsePasswords([]byte(htpasswdFile + "erin:$6$x$y\nfrank:plain\n"))
	for user, pass := range map[string]string{"alice": "s3cret", "bob": "hunter2", "carol": "pa55", "dave": "opensesame"} {
		if _, ok := pf.verify(user, pass); !ok {
			t.Errorf("%s: right password refused", user)
		}
		if _, ok := pf.verify(user, pass+"x"); ok {
			t.Errorf("%s: wrong password accepted", user)
		}
	}
	for _, user := range []string{"erin", "frank"} {
		if _, ok := pf.verify(user, "y"); ok {
			t.Errorf("%s: an unsupported scheme verified", user)
		}
	}
}
