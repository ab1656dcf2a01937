package conf

// Warm is a site's warm-up after purges: the most requested pages a
// purge dropped or made stale are fetched again in the background, most
// requested first, within this budget and only while the site's upstream
// has capacity to spare. Off by default: a purge then leaves each page
// to its next visitor.
type Warm struct {
	// Enabled turns the warm-up on.
	Enabled bool `yaml:"enabled"`
	// Concurrency bounds the site's warm-up requests upstream at once.
	Concurrency int `yaml:"concurrency"`
	// Rate bounds the warm-up requests started per second.
	Rate int `yaml:"rate"`
	// MaxEntries bounds the pages kept to warm per site: the most
	// requested of those purges dropped.
	MaxEntries int `yaml:"max_entries"`
	// MaxBusy is the percentage of the upstream's capacity in use,
	// visitors' waiting requests counted, from which the warm-up waits
	// (as the crawler's max_busy).
	MaxBusy int `yaml:"max_busy"`
}

// The bounds of a warm block's values.
const (
	warmMaxConcurrency = 256
	warmMaxRate        = 10_000
	warmMaxEntries     = 1_000_000
)

func defaultWarm() Warm {
	return Warm{Concurrency: 2, Rate: 20, MaxEntries: 1000, MaxBusy: 50}
}

// validate checks a site's warm block under path; for a host it is
// skipped when equal to base (reported under "defaults" already).
func (w *Warm) validate(p *problems, path string, base *Warm) {
	if base != nil && *w == *base {
		return
	}
	path += ".warm"
	p.intRange(path+".concurrency", w.Concurrency, 1, warmMaxConcurrency)
	p.intRange(path+".rate", w.Rate, 1, warmMaxRate)
	p.intRange(path+".max_entries", w.MaxEntries, 1, warmMaxEntries)
	p.intRange(path+".max_busy", w.MaxBusy, 1, 100)
}
