package testbed

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// apacheOriginSnippet is the repository's Apache configuration for running
// behind ramjet, relative to the module root.
const apacheOriginSnippet = "conf/apache-origin.conf"

// apacheOriginModules are the modules of a Debian Apache that serves PHP
// through php-fpm behind ramjet: Debian's defaults that matter here
// (alias, deflate with filter, env, reqtimeout, setenvif), and what an
// admin enables for php-fpm (proxy, proxy_fcgi), for README's steps
// (remoteip), for WordPress's .htaccess (rewrite) and for per-path
// response headers (headers).
var apacheOriginModules = []string{
	"alias", "deflate", "filter", "env", "reqtimeout", "setenvif",
	"proxy", "proxy_fcgi", "remoteip", "rewrite", "headers",
}

// ApacheOrigin is the configuration of an Apache that serves a site with
// PHP through php-fpm at fpmAddr as a Debian admin's Apache does behind
// ramjet. Its server config is, in order: Debian's apache2.conf settings
// that matter here (keep-alive, the LogFormats with %h, no .ht* files),
// the media types served, its deflate.conf (mod_deflate on for text types), php8.2-fpm.conf's
// handler (over TCP here, not a Unix socket), then the repository's
// conf/apache-origin.conf, included as a2enconf includes it; vhost is the
// site's virtual host.
func ApacheOrigin(t testing.TB, fpmAddr, vhost string) ApacheConfig {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return ApacheConfig{
		Modules:     slices.Clone(apacheOriginModules),
		Server:      fmt.Sprintf(debianApache, fpmAddr, filepath.Join(root, apacheOriginSnippet)),
		VirtualHost: vhost,
	}
}

// debianApache: %[1]s is php-fpm's address, %[2]s the snippet's path.
const debianApache = `# apache2.conf
Timeout 300
KeepAlive On
MaxKeepAliveRequests 100
KeepAliveTimeout 5
HostnameLookups Off
AccessFileName .htaccess
<FilesMatch "^\.ht">
	Require all denied
</FilesMatch>
LogFormat "%%v:%%p %%h %%l %%u %%t \"%%r\" %%>s %%O \"%%{Referer}i\" \"%%{User-Agent}i\"" vhost_combined
LogFormat "%%h %%l %%u %%t \"%%r\" %%>s %%O \"%%{Referer}i\" \"%%{User-Agent}i\"" combined
LogFormat "%%h %%l %%u %%t \"%%r\" %%>s %%O" common

# mods-enabled/mime.conf reads /etc/mime.types (the package media-types,
# which apache2-bin does not need); the types these tests serve:
AddType text/html .html
AddType text/plain .txt
AddType text/css .css
AddType application/javascript .js

# mods-enabled/deflate.conf
<IfModule mod_filter.c>
	AddOutputFilterByType DEFLATE text/html text/plain text/xml text/css text/javascript
	AddOutputFilterByType DEFLATE application/x-javascript application/javascript application/ecmascript
	AddOutputFilterByType DEFLATE application/rss+xml
	AddOutputFilterByType DEFLATE application/wasm
	AddOutputFilterByType DEFLATE application/xml
</IfModule>

# conf-enabled/php8.2-fpm.conf
SetEnvIfNoCase ^Authorization$ "(.+)" HTTP_AUTHORIZATION=$1
<FilesMatch ".+\.ph(?:ar|p|tml)$">
	SetHandler "proxy:fcgi://%[1]s"
</FilesMatch>

# conf-enabled/ramjet-origin.conf
Include %[2]s
`
