package main

import (
	"slices"
	"testing"
)

func TestH2loadCommandLineParses(t *testing.T) {
	c, err := parseFlags([]string{"-t1", "-c100", "-n100000", "-m10", "--tls13-ciphers=TLS_AES_128_GCM_SHA256", "https://127.0.0.1:8443/p"})
	if err != nil {
		t.Fatal(err)
	}
	if c.conns != 100 || c.requests != 100000 || c.streams != 10 || c.ciphers != "TLS_AES_128_GCM_SHA256" {
		t.Fatalf("parsed %+v", c)
	}
	if got := splitShort([]string{"-c1000", "-hold", "5s", "-k"}); !slices.Equal(got, []string{"-c", "1000", "-hold", "5s", "-k"}) {
		t.Fatalf("splitShort: %q", got)
	}
}

func TestOnlyLoopbackTargets(t *testing.T) {
	for _, u := range []string{"https://10.0.0.1/", "https://example.com/", "http://127.0.0.1/"} {
		if _, err := parseFlags([]string{u}); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}
