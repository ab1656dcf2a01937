package conf

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
}

func TestDefaultReturnsAFreshCopy(t *testing.T) {
	a := Default()
	a.Origin.Servers[0] = "changed"
	a.Defaults.BypassCookies[0] = "changed"
	if b := Default(); !reflect.DeepEqual(b.Origin.Servers, []string{"http://127.0.0.1:8081"}) ||
		b.Defaults.BypassCookies[0] != "wordpress_logged_in_*" {
		t.Fatal("Default shares lists between calls")
	}
}

func TestNonLoopbackAdminNeedsToken(t *testing.T) {
	tests := []struct {
		listen, token string
		ok            bool
	}{
		{"127.0.0.1:9090", "", true},
		{"127.1.2.3:9090", "", true},
		{"[::1]:9090", "", true},
		{"localhost:9090", "", true},
		{"", "", true}, // disabled
		{":9090", "", false},
		{"0.0.0.0:9090", "", false},
		{"10.0.0.1:9090", "", false},
		{"[::]:9090", "", false},
		{"admin.internal:9090", "", false},
		{":9090", "s3cret", true},
		{"10.0.0.1:9090", "s3cret", true},
	}
	for _, tt := range tests {
		t.Run(tt.listen+"/"+tt.token, func(t *testing.T) {
			c := Default()
			c.Admin = Admin{Listen: tt.listen, Token: tt.token}
			err := c.Validate()
			if tt.ok != (err == nil) {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "admin.token must be set") {
				t.Fatalf("Validate() = %v, want it to ask for admin.token", err)
			}
		})
	}
}

func TestValidateRejectsBadValues(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   string // the whole problem line
	}{
		{"empty listen", func(c *Config) { c.Listen = "" },
			`listen: "" is not host:port`},
		{"listen without port", func(c *Config) { c.Listen = "localhost" },
			`listen: "localhost" is not host:port`},
		{"listen with bad port", func(c *Config) { c.Listen = ":http" },
			`listen: ":http" has a bad port`},
		{"admin on main listener", func(c *Config) { c.Admin.Listen = "127.0.0.1:80"; c.Listen = "127.0.0.1:80" },
			`admin.listen: must differ from listen`},
		{"unknown gap policy", func(c *Config) { c.Purge.Gap = "drop" },
			`purge.gap: "drop" is not stale or flush`},
		{"no gap grace", func(c *Config) { c.Purge.GapGrace = 0 },
			`purge.gap_grace: must be more than 0 and at most 1h`},
		{"token with space", func(c *Config) { c.Admin.Token = "a b" },
			`admin.token: must not contain spaces or control characters`},
		{"bad level", func(c *Config) { c.Log.Level = "INFO" },
			`log.level: "INFO" is not one of debug, info, warn, error`},
		{"negative timeout", func(c *Config) { c.Server.ReadTimeout = Duration(-time.Second) },
			`server.read_timeout: -1s is negative`},
		{"zero body limit", func(c *Config) { c.Server.MaxRequestBody = 0 },
			`server.max_request_body: must be at least 1, got 0`},
		{"negative header limit", func(c *Config) { c.Server.MaxHeaderBytes = -1 },
			`server.max_header_bytes: must be at least 1, got -1`},
		{"zero conns", func(c *Config) { c.Server.MaxConns = 0 },
			`server.max_conns: must be at least 1, got 0`},
		{"stats list over its bound", func(c *Config) { c.Stats.TopURLs = 1001 },
			`stats.top_urls: must be 0 to 1000, got 1001`},
		{"negative stats list", func(c *Config) { c.Stats.TopURLs = -1 },
			`stats.top_urls: must be 0 to 1000, got -1`},
		{"no origin", func(c *Config) { c.Origin.Servers = nil },
			`origin.servers: must list at least one server`},
		{"https origin", func(c *Config) { c.Origin.Servers = []string{"https://a:443"} },
			`origin.servers[0]: "https://a:443": scheme must be http`},
		{"origin without port", func(c *Config) { c.Origin.Servers = []string{"http://a"} },
			`origin.servers[0]: "http://a" needs an explicit port`},
		{"origin with path", func(c *Config) { c.Origin.Servers = []string{"http://a:80/app"} },
			`origin.servers[0]: "http://a:80/app" must be only http://host:port`},
		{"origin with trailing slash", func(c *Config) { c.Origin.Servers = []string{"http://a:80/"} },
			`origin.servers[0]: "http://a:80/" must be only http://host:port`},
		{"relative origin", func(c *Config) { c.Origin.Servers = []string{"a:80"} },
			`origin.servers[0]: "a:80": scheme must be http`},
		{"origin without host", func(c *Config) { c.Origin.Servers = []string{"http://:80"} },
			`origin.servers[0]: "http://:80" has no host`},
		{"origin port out of range", func(c *Config) { c.Origin.Servers = []string{"http://a:70000"} },
			`origin.servers[0]: "http://a:70000" has a bad port`},
		{"duplicate origin", func(c *Config) { c.Origin.Servers = []string{"http://a:1", "http://a:1"} },
			`origin.servers[1]: "http://a:1" is already listed`},
		{"health path without slash", func(c *Config) { c.Origin.Health.Path = "healthz" },
			`origin.health.path: "healthz" must start with "/" and contain no spaces`},
		{"active health needs interval", func(c *Config) { c.Origin.Health.Path = "/h"; c.Origin.Health.Interval = 0 },
			`origin.health.interval: must be positive, got 0s`},
		{"origin idle timeout of none", func(c *Config) { c.Origin.IdleTimeout = 0 },
			`origin.idle_timeout: must be positive, got 0s`},
		{"zero fall", func(c *Config) { c.Origin.Health.Fall = 0 },
			`origin.health.fall: must be at least 1, got 0`},
		{"tiny cache", func(c *Config) { c.Cache.Size = MiB - 1 },
			`cache.size: must be at least 1MiB, got 1048575`},
		{"object larger than cache", func(c *Config) { c.Cache.MaxObjectSize = 2 * c.Cache.Size },
			`cache.max_object_size: 512MiB is larger than cache.size (256MiB)`},
		{"negative min_size", func(c *Config) { c.Cache.Compress.MinSize = -1 },
			`cache.compress.min_size: must be at least 0, got -1`},
		{"media type wildcard", func(c *Config) { c.Cache.Compress.Types = []string{"text/*"} },
			`cache.compress.types[0]: "text/*" is not a media type like text/html (no parameters or wildcards)`},
		{"media type upper case", func(c *Config) { c.Cache.Compress.Types = []string{"Text/HTML"} },
			`cache.compress.types[0]: "Text/HTML" must be lower case`},
		{"negative ttl", func(c *Config) { c.Defaults.DefaultTTL = Duration(-time.Minute) },
			`defaults.default_ttl: -1m0s is negative`},
		{"star in middle of cookie", func(c *Config) { c.Defaults.BypassCookies = []string{"wp_*_x"} },
			`defaults.bypass_cookies[0]: "wp_*_x": "*" may only end a pattern`},
		{"empty cookie pattern", func(c *Config) { c.Defaults.VaryCookies = []string{""} },
			`defaults.vary_cookies[0]: must not be empty`},
		{"cookie with separator", func(c *Config) { c.Defaults.VaryCookies = []string{"a=b"} },
			`defaults.vary_cookies[0]: "a=b" contains a character not allowed in a name`},
		{"param with ampersand", func(c *Config) { c.Defaults.DropQueryParams = []string{"a&b"} },
			`defaults.drop_query_params[0]: "a&b" contains a character not allowed in a name`},
		{"anonymous cookie with separator", func(c *Config) { c.Defaults.AnonymousCookies = []string{"a;b"} },
			`defaults.anonymous_cookies[0]: "a;b" contains a character not allowed in a name`},
		{"relative default_ttl_with_cookies path", func(c *Config) { c.Defaults.DefaultTTLWithCookies = []string{"static/*"} },
			`defaults.default_ttl_with_cookies[0]: "static/*" must start with "/"`},
		{"default_ttl_with_cookies path with a query", func(c *Config) { c.Defaults.DefaultTTLWithCookies = []string{"/a?b"} },
			`defaults.default_ttl_with_cookies[0]: "/a?b": a path has no query or fragment`},
		{"host name upper case", func(c *Config) { c.Hosts = []Host{{Names: []string{"A.test"}, Site: c.Defaults}} },
			`hosts[0].names[0]: "A.test" must be lower case`},
		{"host named as the default site", func(c *Config) { c.Hosts = []Host{{Names: []string{"a.test", "_default"}, Site: c.Defaults}} },
			`hosts[0].names[1]: "_default" is what /stats and /metrics call the hosts no entry names`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mutate(c)
			err := c.Validate()
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Validate() = %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestValidateAcceptsPatterns(t *testing.T) {
	c := Default()
	c.Defaults.BypassCookies = []string{"*", "wp-*", "PHPSESSID"}
	c.Defaults.DropQueryParams = []string{"utm_*", "fb-id", "*"}
	c.Origin.Servers = []string{"http://[::1]:8081", "http://backend.internal:80"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := Default()
	c.Listen = ""
	c.Log.Format = "xml"
	c.Cache.Size = 0
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	if n := len(flatten(err)); n != 3 {
		t.Fatalf("Validate() reported %d problems, want 3:\n%v", n, err)
	}
}
