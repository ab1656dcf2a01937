package conf

import (
	"reflect"
	"testing"
)

func TestWarmIsOffByDefault(t *testing.T) {
	if w := Default().Defaults.Warm; w != (Warm{Concurrency: 2, Rate: 20, MaxEntries: 1000, MaxBusy: 50}) {
		t.Fatalf("default warm block %+v", w)
	}
}

func TestWarmBlockErrorsNameTheLine(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      []string
	}{
		{"no concurrency", "defaults:\n  warm:\n    enabled: true\n    concurrency: 0\n",
			[]string{`ramjet.yaml:4: defaults.warm.concurrency: must be between 1 and 256, got 0`}},
		{"rate zero", "defaults:\n  warm:\n    rate: 0\n",
			[]string{`ramjet.yaml:3: defaults.warm.rate: must be between 1 and 10000, got 0`}},
		{"negative entries", "defaults:\n  warm:\n    max_entries: -1\n",
			[]string{`ramjet.yaml:3: defaults.warm.max_entries: must be between 1 and 1000000, got -1`}},
		{"busy over 100", "defaults:\n  warm:\n    max_busy: 101\n",
			[]string{`ramjet.yaml:3: defaults.warm.max_busy: must be between 1 and 100, got 101`}},
		{"unknown key", "defaults:\n  warm:\n    threads: 3\n",
			[]string{`ramjet.yaml:3: defaults.warm.threads: unknown key`}},
		{"not a number", "defaults:\n  warm:\n    rate: fast\n",
			[]string{`ramjet.yaml:3: defaults.warm.rate: "fast" is not an integer`}},
		{"host's own block", "hosts:\n  - names: [a.test]\n    warm:\n      max_entries: 0\n",
			[]string{`ramjet.yaml:4: hosts[0].warm.max_entries: must be between 1 and 1000000, got 0`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "ramjet.yaml")
			if got := problemLines(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestHostWarmBlockOverlaysDefaults(t *testing.T) {
	doc := "defaults:\n  warm:\n    rate: 5\nhosts:\n  - names: [a.test]\n    warm:\n      enabled: true\n"
	cfg, err := Parse([]byte(doc), "ramjet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Warm{Enabled: true, Concurrency: 2, Rate: 5, MaxEntries: 1000, MaxBusy: 50}
	if got := cfg.Hosts[0].Warm; got != want {
		t.Fatalf("host warm %+v, want %+v", got, want)
	}
	if cfg.Defaults.Warm.Enabled {
		t.Fatalf("the host's block changed the defaults: %+v", cfg.Defaults.Warm)
	}
}
