package conf

import (
	"fmt"
	"time"
)

// Crawler is a site's budget for the LiteSpeed Cache plugin's crawler
// (user agents lscache_runner, lscache_walker), and what a docroot site's
// PHP is told about crawling in the server variables the plugin reads.
// Its hits are served as anyone's; its misses go upstream only while
// the site's upstream has capacity to spare, else they get 503 with
// Retry-After at once.
type Crawler struct {
	// MaxMisses bounds the site's crawler requests upstream at once. 0
	// sends none, and tells a docroot site's plugin crawling is off
	// (X-LSCACHE without "crawler").
	MaxMisses int `yaml:"max_misses"`
	// MaxBusy is the percentage of the upstream's capacity (the site's
	// PHP workers, or the origin's connections) in use, visitors' queued
	// requests counted, from which crawler misses are refused.
	MaxBusy int `yaml:"max_busy"`
	// RetryAfter is what a refused crawler request is told to wait
	// (whole seconds).
	RetryAfter Duration `yaml:"retry_after"`
	// USleep (CRAWLER_USLEEP) is the least pause, in microseconds,
	// between the plugin's crawl batches; 0 sets no variable.
	USleep int `yaml:"usleep"`
	// LoadLimit (CRAWLER_LOAD_LIMIT) caps the server load average per
	// CPU the plugin's own setting may allow; LoadLimitEnforce
	// (CRAWLER_LOAD_LIMIT_ENFORCE) replaces that setting. 0 sets no
	// variable (max_misses: 0 is how crawling is turned off).
	LoadLimit        int `yaml:"load_limit"`
	LoadLimitEnforce int `yaml:"load_limit_enforce"`
}

// The bounds of a crawler block's values.
const (
	crawlerMaxMisses  = 1024
	crawlerMaxRetry   = Duration(time.Hour)
	crawlerMaxUSleep  = 60_000_000 // a minute between batches
	crawlerMaxLoadLim = 1024
)

func defaultCrawler() Crawler {
	return Crawler{MaxMisses: 2, MaxBusy: 50, RetryAfter: Duration(10 * time.Second)}
}

// validate checks a site's crawler block under path; for a host it is
// skipped when equal to base (reported under "defaults" already).
func (c *Crawler) validate(p *problems, path string, base *Crawler) {
	if base != nil && *c == *base {
		return
	}
	path += ".crawler"
	p.intRange(path+".max_misses", c.MaxMisses, 0, crawlerMaxMisses)
	p.intRange(path+".max_busy", c.MaxBusy, 1, 100)
	if c.RetryAfter < Duration(time.Second) || c.RetryAfter > crawlerMaxRetry {
		p.add(path+".retry_after", fmt.Sprintf("must be between 1s and 1h, got %s", c.RetryAfter))
	}
	p.intRange(path+".usleep", c.USleep, 0, crawlerMaxUSleep)
	p.intRange(path+".load_limit", c.LoadLimit, 0, crawlerMaxLoadLim)
	p.intRange(path+".load_limit_enforce", c.LoadLimitEnforce, 0, crawlerMaxLoadLim)
}

func (p *problems) intRange(path string, n, low, high int) {
	if n < low || n > high {
		p.add(path, fmt.Sprintf("must be between %d and %d, got %d", low, high, n))
	}
}
