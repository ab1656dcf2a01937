package proxy

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/docroot"
)

// phpSite is a docroot site with one script that runs until killed.
func phpSite(t *testing.T, workers int) Site {
	t.Helper()
	bin := testbed.PHPCGI(t)
	dir := testbed.PublicDir(t) // workers run as nobody under root
	script := "<?php echo 'started'; flush(); sleep(600);"
	if err := os.WriteFile(filepath.Join(dir, "forever.php"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return Site{Cache: true, Docroot: &Docroot{
		Config: docroot.Config{Root: dir},
		PHP:    &phppool.Config{Binary: bin, Min: 1, Max: workers},
	}}
}

// A reload that replaces a PHP pool lets the old pool's requests run for
// the drain timeout, not longer: then its busy worker is killed and the
// client told so.
func TestReplacedPoolDrainIsBoundedByDrainTimeout(t *testing.T) {
	cfg := testConfig("http://127.0.0.1:1") // never asked: the site is served from its docroot
	cfg.Default, cfg.DrainTimeout = phpSite(t, 1), 300*time.Millisecond
	p := newTestProxy(t, cfg, nil)
	base := serveProxy(t, p)
	answer := make(chan reply, 1)
	go func() { answer <- get(t, base+"/forever.php") }()
	waitBusy(t, p)
	changed := cfg
	site := *changed.Default.Docroot
	php := *site.PHP
	php.Max = 2 // a new pool; the old one drains
	site.PHP = &php
	changed.Default.Docroot = &site
	if err := p.Reload(t.Context(), changed); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-answer:
		if r.status < 500 {
			t.Fatalf("request on the drained pool answered %d %q, want an error once the drain ran out", r.status, r.body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the replaced pool's request still runs 20 s after a reload with a 300 ms drain timeout")
	}
}

// waitBusy waits until a worker of the proxy's pool runs a request.
func waitBusy(t *testing.T, p *Proxy) {
	t.Helper()
	testbed.WaitFor(t, 10*time.Second, "a PHP worker to become busy", func() bool {
		for _, ps := range p.PHPStatus() {
			for _, w := range ps.Workers {
				if w.State == "busy" {
					return true
				}
			}
		}
		return false
	})
}
