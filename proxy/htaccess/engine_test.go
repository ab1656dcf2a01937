package htaccess

import (
	"strings"
	"testing"
)

// TestPHPOffByEngineAndHandlers: the directives sites use to switch PHP
// off in a directory (and on again below it) decide PHPOff for a script
// there, <Files> sections by the script's name, the deepest word
// winning; the cause names the file and line.
func TestPHPOffByEngineAndHandlers(t *testing.T) {
	tests := []struct {
		name, uploads, deeper string
		path                  string
		off                   bool
	}{
		{name: "php_flag engine off", uploads: "php_flag engine off\n", off: true},
		{name: "php_admin_flag engine off", uploads: "php_admin_flag engine off\n", off: true},
		{name: "php_value engine 0", uploads: "php_value engine 0\n", off: true},
		{name: "unreadable engine value fails closed", uploads: "php_flag engine maybe\n", off: true},
		{name: "Wordfence's block inside IfModule mod_php", uploads: "<IfModule mod_php7.c>\nphp_flag engine 0\n</IfModule>\n", off: true},
		{name: "php7_module", uploads: "<IfModule php7_module>\nphp_flag engine off\n</IfModule>\n", off: true},
		{name: "SetHandler none", uploads: "SetHandler none\n", off: true},
		{name: "SetHandler default-handler in FilesMatch", uploads: "<FilesMatch \"\\.php$\">\nSetHandler default-handler\n</FilesMatch>\n", off: true},
		{name: "SetHandler for other files only", uploads: "<Files \"*.jpg\">\nSetHandler none\n</Files>\n"},
		{name: "RemoveHandler .php", uploads: "RemoveHandler .php .phtml\n", off: true},
		{name: "RemoveType .php", uploads: "RemoveType php\n", off: true},
		{name: "AddHandler cgi-script .php", uploads: "AddHandler cgi-script .php .pl\nOptions -ExecCGI\n", off: true},
		{name: "AddType text/plain .php", uploads: "AddType text/plain .php\n", off: true},
		{name: "AddType application/x-httpd-php .php", uploads: "AddType application/x-httpd-php .php\n"},
		{name: "SetHandler php-fpm proxy", uploads: "<FilesMatch \\.php$>\nSetHandler \"proxy:fcgi://127.0.0.1:9000\"\n</FilesMatch>\n"},
		{name: "php_flag engine on", uploads: "php_flag engine on\n"},
		{name: "other php settings", uploads: "php_value upload_max_filesize 64M\n"},
		{name: "switched on again deeper", uploads: "php_flag engine off\n", deeper: "php_flag engine on\n", path: "/uploads/deep/x.php"},
		{name: "handler on again deeper", uploads: "SetHandler none\n", deeper: "SetHandler application/x-httpd-php\n", path: "/uploads/deep/x.php"},
		{name: "off above applies deeper", uploads: "php_flag engine off\n", deeper: "php_value memory_limit 1G\n", path: "/uploads/deep/x.php", off: true},
		{name: "only under its directory", uploads: "php_flag engine off\n", path: "/x.php"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"uploads/.htaccess": tt.uploads, "uploads/x.php": "", "x.php": "", "uploads/deep/x.php": ""}
			if tt.deeper != "" {
				files["uploads/deep/.htaccess"] = tt.deeper
			}
			tr, _ := newTree(t, files)
			path := tt.path
			if path == "" {
				path = "/uploads/x.php"
			}
			o := eval(t, tr, "GET "+path, nil)
			if o.Status != 0 {
				t.Fatalf("status %d (%s)", o.Status, o.Cause)
			}
			cause, off := o.PHPOff()
			if off != tt.off {
				t.Fatalf("PHPOff = %v (%q), want %v", off, cause, tt.off)
			}
			if off && !strings.Contains(cause, ".htaccess:") {
				t.Fatalf("cause %q names no file and line", cause)
			}
		})
	}
}
