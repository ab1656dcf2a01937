package adoption

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// NewToken is a random token: 32 bytes, hex.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// WriteTokens gives each host a token file readable only by its owner
// and ramjet's group (0640, owner:gid): the site's WordPress reads it as
// the site's user, ramjet as its group. A file already there keeps its
// token (adopting again hands out no new ones); its owner and mode are
// set again.
func (p *Plan) WriteTokens(gid int) error {
	if err := os.MkdirAll(p.TokenDir, 0o751); err != nil {
		return fmt.Errorf("adoption: token directory: %w", err)
	}
	for i := range p.Hosts {
		h := &p.Hosts[i]
		if err := writeToken(p.TokenFile(h), h.OwnerUID, gid); err != nil {
			return fmt.Errorf("adoption: token of %s: %w", h.Names[0], err)
		}
	}
	return nil
}

func writeToken(file string, uid, gid int) error {
	if uid < 0 {
		uid = 0 // no owner known: root's and ramjet's alone
	}
	old, err := os.ReadFile(file)
	switch {
	case err == nil && len(bytes.TrimSpace(old)) > 0: // kept, its owner and mode set again
		if err := os.Chown(file, uid, gid); err != nil {
			return err
		}
		return os.Chmod(filepath.Clean(file), 0o640)
	case err == nil || errors.Is(err, fs.ErrNotExist):
		return writeOwned(file, []byte(NewToken()+"\n"), uid, gid, 0o640)
	default:
		return err
	}
}
