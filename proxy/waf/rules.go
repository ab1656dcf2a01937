package waf

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	coreruleset "github.com/corazawaf/coraza-coreruleset/v4"
	"github.com/corazawaf/coraza/v3"
)

// Rules is what a compiled Set is made of. Sites whose Rules are equal
// (and whose rule files hold the same bytes) share one Set.
type Rules struct {
	// Paranoia is the CRS paranoia level, 1 to 4; 0 means 1.
	Paranoia int
	// InboundThreshold and OutboundThreshold are the anomaly scores that
	// stop a request or a response; 0 means the CRS's 5 and 4.
	InboundThreshold, OutboundThreshold int
	// Exclusions name built-in exclusion sets (Exclusions lists them).
	Exclusions []string
	// Before and After are SecLang files read before and after the CRS.
	Before, After []string
	// Responses adds the CRS response rules (RESPONSE-95x) and response
	// body access.
	Responses bool
}

// Exclusions are the built-in exclusion sets, by name.
var Exclusions = []string{"wordpress"}

// ErrUnknownExclusion is returned for an exclusion set ramjet lacks.
var ErrUnknownExclusion = errors.New("waf: unknown exclusion set")

// MaxBody bounds what a Set inspects of a request body; the caller keeps
// its own, lower, per-site limit and never hands over more.
const MaxBody = 64 << 20

//go:embed exclusions/*.conf
var exclusionFiles embed.FS

// key identifies r's compiled form: its settings and the content of its
// rule files (a reload after a file changed compiles again).
func (r Rules) key() (string, error) {
	r = r.normalised()
	var b strings.Builder
	fmt.Fprintf(&b, "p%d i%d o%d r%t x%q", r.Paranoia, r.InboundThreshold, r.OutboundThreshold, r.Responses, r.Exclusions)
	for _, list := range [][]string{r.Before, r.After} {
		b.WriteString(" |")
		for _, f := range list {
			data, err := os.ReadFile(f)
			if err != nil {
				return "", fmt.Errorf("waf: %w", err)
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(&b, " %q=%s", f, hex.EncodeToString(sum[:8]))
		}
	}
	return b.String(), nil
}

func (r Rules) normalised() Rules {
	if r.Paranoia == 0 {
		r.Paranoia = 1
	}
	if r.InboundThreshold == 0 {
		r.InboundThreshold = 5
	}
	if r.OutboundThreshold == 0 {
		r.OutboundThreshold = 4
	}
	return r
}

// directives is the SecLang configuration of r: Coraza's recommended
// base with the engine on and the body limits raised to MaxBody (the
// caller enforces the site's own), no audit log, the CRS setup with r's
// paranoia and thresholds, then the exclusions, the files and the CRS.
func (r Rules) directives() (string, error) {
	r = r.normalised()
	var b strings.Builder
	line := func(s ...string) {
		for _, l := range s {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	limit := strconv.Itoa(MaxBody)
	line("Include @coraza.conf-recommended",
		"SecRuleEngine On",
		"SecRequestBodyLimit "+limit,
		"SecRequestBodyInMemoryLimit "+limit,
		"SecRequestBodyLimitAction ProcessPartial",
		"SecAuditEngine Off",
		"SecResponseBodyAccess "+onOff(r.Responses),
		"Include @crs-setup.conf.example",
		fmt.Sprintf(`SecAction "id:900000,phase:1,pass,t:none,nolog,setvar:tx.blocking_paranoia_level=%d,setvar:tx.detection_paranoia_level=%d"`, r.Paranoia, r.Paranoia),
		fmt.Sprintf(`SecAction "id:900110,phase:1,pass,t:none,nolog,setvar:tx.inbound_anomaly_score_threshold=%d,setvar:tx.outbound_anomaly_score_threshold=%d"`, r.InboundThreshold, r.OutboundThreshold))
	for _, x := range r.Exclusions {
		if !slices.Contains(Exclusions, x) {
			return "", fmt.Errorf("%w %q", ErrUnknownExclusion, x)
		}
		line("Include @ramjet/" + x + ".conf")
	}
	for _, f := range r.Before {
		line("Include " + quotePath(f))
	}
	line("Include @owasp_crs/REQUEST-*.conf")
	if r.Responses {
		line("Include @owasp_crs/RESPONSE-*.conf")
	}
	for _, f := range r.After {
		line("Include " + quotePath(f))
	}
	return b.String(), nil
}

func onOff(on bool) string {
	if on {
		return "On"
	}
	return "Off"
}

// quotePath writes a file name as an Include argument.
func quotePath(f string) string {
	if strings.ContainsAny(f, " \t\"") {
		return strconv.Quote(f)
	}
	return f
}

// compile builds r's Set.
func compile(r Rules, key string) (*Set, error) {
	d, err := r.directives()
	if err != nil {
		return nil, err
	}
	w, err := coraza.NewWAF(coraza.NewWAFConfig().WithRootFS(rootFS{}).WithDirectives(d))
	if err != nil {
		return nil, fmt.Errorf("waf: compiling the rules: %w", err)
	}
	return &Set{waf: w, rules: r.normalised(), key: key}, nil
}

// rootFS is where Include and @pmFromFile look: "@owasp_crs/…",
// "@coraza.conf-recommended" and "@crs-setup.conf.example" in the
// embedded CRS, "@ramjet/…" in the exclusion sets shipped here, anything
// else on disk (a site's files, Debian's modsecurity-crs), as the
// absolute or relative path the rules name.
type rootFS struct{}

func (rootFS) split(name string) (fs.FS, string, bool) {
	i := strings.IndexByte(name, '@')
	if i < 0 {
		return nil, name, false
	}
	name = name[i:] // an include inside an embedded file is joined to its directory
	if rest, ok := strings.CutPrefix(name, "@ramjet/"); ok {
		return exclusionFiles, "exclusions/" + rest, true
	}
	return coreruleset.FS, name, true
}

func (f rootFS) Open(name string) (fs.File, error) {
	if sub, n, ok := f.split(name); ok {
		return sub.Open(n)
	}
	return os.Open(name)
}

func (f rootFS) ReadFile(name string) ([]byte, error) {
	if sub, n, ok := f.split(name); ok {
		return fs.ReadFile(sub, n)
	}
	return os.ReadFile(name)
}

func (f rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if sub, n, ok := f.split(name); ok {
		return fs.ReadDir(sub, n)
	}
	return os.ReadDir(name)
}

func (f rootFS) Glob(pattern string) ([]string, error) {
	if sub, n, ok := f.split(pattern); ok {
		return fs.Glob(sub, n)
	}
	return filepath.Glob(pattern)
}

var (
	_ fs.ReadFileFS = rootFS{}
	_ fs.ReadDirFS  = rootFS{}
	_ fs.GlobFS     = rootFS{}
)
