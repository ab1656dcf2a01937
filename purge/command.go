package purge

import "time"

// Kind says what a Target names.
type Kind uint8

const (
	// KindTag names entries carrying the tag.
	KindTag Kind = iota + 1
	// KindTagPrefix names entries carrying any tag that starts with Value
	// (LSCache "name*").
	KindTagPrefix
	// KindTagSuffix names entries carrying any tag that ends with Value
	// (LSCache "*name").
	KindTagSuffix
	// KindURL names every variant of one URL. Value is absolute
	// ("http://host/path?q") or a path ("/path?q") to be resolved against
	// the Host of the request or response that carried it.
	KindURL
	// KindPrefix names every URL starting with Value (absolute or path).
	KindPrefix
	// KindAll names everything (in the command's scope).
	KindAll
)

// Target is one thing to purge.
type Target struct {
	Kind  Kind   `json:"kind"`
	Value string `json:"value,omitempty"`
	// Soft marks matching entries stale instead of removing them: the next
	// request is served the stale copy while one request refreshes it.
	Soft bool `json:"soft,omitempty"`
}

// Command is one purge, from any source. Commands are idempotent: applying
// one twice has the effect of applying it once.
type Command struct {
	Targets []Target `json:"targets"`
	// Private scopes the command to one client's private entries (LSCache
	// "private,"). Identity names that client; the public cache is not
	// touched.
	Private  bool   `json:"private,omitempty"`
	Identity string `json:"identity,omitempty"`
	// Host resolves path-only URL and prefix targets.
	Host string `json:"host,omitempty"`
	// Site limits the command to one site's pages: its tags, its hosts,
	// "all" meaning all of it. "" is every site: the operator's scope
	// (the admin token, the CLI). Purges from responses and PURGE
	// requests always carry the site that answered.
	Site string `json:"site,omitempty"`
	// Before, when set (unix nanoseconds), limits tag and purge-all
	// targets to entries whose fill began before it: a response's own
	// purge header must not invalidate the response. Local only; a node
	// applying a fanned-out command uses its own clock.
	Before int64 `json:"-"`
	// Gap marks a purge of everything that stands for purges nobody can
	// name (a node's dropped queue, a node's fan-out gap): the receiving
	// node applies its own gap policy (FanoutConfig.Gap) instead of a
	// hard flush.
	Gap bool `json:"gap,omitempty"`
	// Grace, on a Gap command applied locally, is how long entries stay
	// servable stale before they are gone (0: gone at once, a flush).
	Grace time.Duration `json:"-"`
}

// Result counts what a command matched, per kind of target.
type Result struct {
	Tags     int  `json:"tags"`     // tags whose entries were invalidated
	URLs     int  `json:"urls"`     // URLs (with all their variants) removed
	Prefixes int  `json:"prefixes"` // objects removed by prefix
	All      bool `json:"all"`
	// Stale counts the objects a gap left servable stale (Command.Gap).
	Stale int `json:"stale,omitempty"`
}

// Invalidator applies commands to a cache. The proxy's cache implements it.
type Invalidator interface {
	Purge(cmd Command) Result
}
