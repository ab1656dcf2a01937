package conf

import (
	"reflect"
	"testing"
	"time"
)

func TestCrawlerBudgetIsOnByDefault(t *testing.T) {
	c := Default().Defaults.Crawler
	if c.MaxMisses != 2 || c.MaxBusy != 50 || c.RetryAfter != Duration(10*time.Second) ||
		c.USleep != 0 || c.LoadLimit != 0 || c.LoadLimitEnforce != 0 {
		t.Fatalf("default crawler block %+v", c)
	}
}

func TestCrawlerBlockErrorsNameTheLine(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      []string
	}{
		{"busy over 100", "defaults:\n  crawler:\n    max_busy: 150\n",
			[]string{`ramjet.yaml:3: defaults.crawler.max_busy: must be between 1 and 100, got 150`}},
		{"busy zero", "defaults:\n  crawler:\n    max_busy: 0\n",
			[]string{`ramjet.yaml:3: defaults.crawler.max_busy: must be between 1 and 100, got 0`}},
		{"negative misses", "defaults:\n  crawler:\n    max_misses: -1\n",
			[]string{`ramjet.yaml:3: defaults.crawler.max_misses: must be between 0 and 1024, got -1`}},
		{"retry under a second", "defaults:\n  crawler:\n    retry_after: 100ms\n",
			[]string{`ramjet.yaml:3: defaults.crawler.retry_after: must be between 1s and 1h, got 100ms`}},
		{"negative usleep", "defaults:\n  crawler:\n    usleep: -5\n",
			[]string{`ramjet.yaml:3: defaults.crawler.usleep: must be between 0 and 60000000, got -5`}},
		{"unknown key", "defaults:\n  crawler:\n    threads: 3\n",
			[]string{`ramjet.yaml:3: defaults.crawler.threads: unknown key`}},
		{"host's own block", "hosts:\n  - names: [a.test]\n    crawler:\n      load_limit: 2000\n",
			[]string{`ramjet.yaml:4: hosts[0].crawler.load_limit: must be between 0 and 1024, got 2000`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "ramjet.yaml")
			if got := problemLines(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestHostCrawlerBlockOverlaysDefaults(t *testing.T) {
	doc := "defaults:\n  crawler:\n    max_misses: 4\n    usleep: 1000\nhosts:\n  - names: [a.test]\n    crawler:\n      max_busy: 80\n"
	cfg, err := Parse([]byte(doc), "ramjet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Crawler{MaxMisses: 4, MaxBusy: 80, RetryAfter: Duration(10 * time.Second), USleep: 1000}
	if got := cfg.Hosts[0].Crawler; got != want {
		t.Fatalf("host crawler %+v, want %+v", got, want)
	}
	if cfg.Defaults.Crawler.MaxBusy != 50 {
		t.Fatalf("the host's block changed the defaults: %+v", cfg.Defaults.Crawler)
	}
}
