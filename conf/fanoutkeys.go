package conf

import (
	"fmt"
	"os"
	"strings"
)

// minKeyLen is the shortest fan-out key taken: an HMAC key guessed is a
// key to purge, or flush, every node.
const minKeyLen = 16

// FanoutKeys are the keys that sign fan-out entries: RedisKeys, or the
// lines of RedisKeysFile (blank lines and "#" comments left out), the
// signing key first. None when neither is set.
func (u *Purge) FanoutKeys() ([]string, error) {
	if u.RedisKeysFile == "" {
		return u.RedisKeys, nil
	}
	b, err := os.ReadFile(u.RedisKeysFile)
	if err != nil {
		return nil, fmt.Errorf("redis keys file: %w", err)
	}
	var keys []string
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			keys = append(keys, line)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("redis keys file %s holds no key", u.RedisKeysFile)
	}
	return keys, nil
}

// validateKeys checks the fan-out keys: from one source, each long enough,
// without white space, none twice.
func (u *Purge) validateKeys(p *problems) {
	path := "purge.redis_keys"
	if u.RedisKeysFile != "" {
		if len(u.RedisKeys) > 0 {
			p.add("purge.redis_keys_file", "give redis_keys or redis_keys_file, not both")
			return
		}
		path = "purge.redis_keys_file"
	}
	keys, err := u.FanoutKeys()
	if err != nil {
		p.add(path, err.Error())
		return
	}
	seen := map[string]bool{}
	for i, k := range keys {
		// A key is a secret: messages name its place, never its text.
		at, what := fmt.Sprintf("%s[%d]", path, i), "key"
		if u.RedisKeysFile != "" {
			at, what = path, fmt.Sprintf("key %d", i+1)
		}
		switch {
		case len(k) < minKeyLen:
			p.add(at, fmt.Sprintf("%s: at least %d characters, got %d", what, minKeyLen, len(k)))
		case strings.ContainsFunc(k, isSpaceOrCtl):
			p.add(at, what+": must not contain white space or control characters")
		case seen[k]:
			p.add(at, what+": the same as an earlier one")
		}
		seen[k] = true
	}
}
