package docroot

import (
	"testing"

	"github.com/ramjet-proxy/ramjet/phppool"
)

func TestServerVarsReachEveryScriptAndNoClientSetsThem(t *testing.T) {
	php := &fakePHP{out: "\r\nok"}
	vars := []phppool.Param{{Name: "X-LSCACHE", Value: "on,crawler"}, {Name: "CRAWLER_USLEEP", Value: "2000"}}
	h, err := New(Config{Root: tree(t), ServerVars: vars}, php, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A client's X-LSCACHE field is HTTP_X_LSCACHE, and one with "_"
	// (that could pose as CRAWLER_USLEEP) is dropped.
	hdr := map[string]string{"X-LSCACHE": "forged", "CRAWLER_USLEEP": "1"}
	if _, _, err := do(t, h, "GET", "/hello.php", hdr, ""); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"X-LSCACHE": "on,crawler", "CRAWLER_USLEEP": "2000", "HTTP_X_LSCACHE": "forged"} {
		if got, _ := php.param(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if v, ok := php.param("HTTP_CRAWLER_USLEEP"); ok {
		t.Errorf("a client's CRAWLER_USLEEP field reached PHP: %q", v)
	}
}
