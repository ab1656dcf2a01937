package adoption

import (
	"strings"
	"testing"
)

func TestSocketUnitBindsRamjetsAddressesWithReusePortForItsService(t *testing.T) {
	got := PackageService.socketUnit([]string{":80", "127.0.0.1:443"})
	for _, want := range []string{"\nListenStream=80\n", "\nListenStream=127.0.0.1:443\n", "\nReusePort=yes\n", "\nService=ramjet.service\n", "\nWantedBy=sockets.target\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("socket unit lacks %q:\n%s", want, got)
		}
	}
}

func TestApplyAsTheUnitWritesItsConfigurationOnlyAtTheStart(t *testing.T) {
	j := &Job{Service: &PackageService, Backup: "/var/lib/ramjet/adopt"}
	for _, out := range []string{"-", "", "/etc/ramjet/ramjet.yaml", "/etc/ramjet//ramjet.yaml"} {
		j.Out = out
		if err := j.serviceConf(); err != nil || j.Out != "/var/lib/ramjet/adopt/ramjet.yaml" {
			t.Errorf("--out %q: staged as %q (%v), want the backup's ramjet.yaml", out, j.Out, err)
		}
	}
	j.Out = "/srv/ramjet.yaml"
	if err := j.serviceConf(); err == nil || !strings.Contains(err.Error(), "ramjet.service reads /etc/ramjet/ramjet.yaml") {
		t.Errorf("--out /srv/ramjet.yaml: %v, want a refusal naming the unit's file", err)
	}
}
