package proxy

import "testing"

// admit routes the Host settleTarget wrote without lower-casing it
// again: for every host that settles, routeNormal finds the site route
// finds (exact names, wildcards, the default; with and without a port).
func FuzzRouteNormalAgreesWithRoute(f *testing.F) {
	r, err := newRouter(Config{Sites: []Site{
		{Names: []string{"a.test", "WWW.A.Test"}}, {Names: []string{"*.b.test"}}, {Names: []string{"127.0.0.1"}},
	}})
	if err != nil {
		f.Fatal(err)
	}
	for _, h := range []string{"a.test", "A.TEST.:80", "www.a.test:8080", "x.b.test", "X.B.TEST.", "b.test",
		"127.0.0.1:51470", "[::1]:80", "c.test", ""} {
		f.Add(h, false)
	}
	f.Fuzz(func(t *testing.T, host string, tls bool) {
		norm, err := appendHost(nil, []byte(host), tls)
		if err != nil {
			return // refused with 400: routed to no site
		}
		if got, want := r.routeNormal(norm), r.route(norm); got != want {
			t.Fatalf("routeNormal(%q) = site %q, route = site %q", norm, got.scope, want.scope)
		}
	})
}
