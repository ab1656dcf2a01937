package adoption

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// Manifest is what a backup holds besides the files: enough for
// --rollback to put everything back without reading anything else.
type Manifest struct {
	Server     string   `json:"server"`      // "nginx" or "apache"
	Bin        string   `json:"bin"`         // the web server's tool (nginx, apachectl)
	Conf       string   `json:"conf"`        // its configuration file
	Files      []string `json:"files"`       // the files adoption edits
	RamjetPID  int      `json:"ramjet_pid"`  // the ramjet --apply started; 0 before
	RamjetConf string   `json:"ramjet_conf"` // its configuration
	Listens    []string `json:"listens"`     // the addresses ramjet took
	Origin     string   `json:"origin"`      // where the web server moved
	// Service is the state of ramjet.service before --apply, when
	// ramjet serves as that unit.
	Service *ServiceState `json:"service,omitempty"`
}

const manifestName = "manifest.json"

// Backup is a directory holding the web server's files as they were
// (orig/), as they are while both serve (both/), as --apply left them
// (moved/), and the manifest.
type Backup struct {
	Dir string
	Manifest
}

// SaveBackup writes the files' three versions and the manifest.
func SaveBackup(dir string, m Manifest, orig, both, moved map[string][]byte) (*Backup, error) {
	b := &Backup{Dir: dir, Manifest: m}
	b.Files = slices.Sorted(maps.Keys(orig))
	for name, set := range map[string]map[string][]byte{"orig": orig, "both": both, "moved": moved} {
		for f, data := range set {
			p := filepath.Join(dir, name, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return nil, fmt.Errorf("adoption: backup: %w", err)
			}
			if err := os.WriteFile(p, data, 0o600); err != nil {
				return nil, fmt.Errorf("adoption: backup: %w", err)
			}
		}
	}
	return b, b.Save()
}

// Save writes the manifest.
func (b *Backup) Save() error {
	data, err := json.MarshalIndent(b.Manifest, "", "  ")
	if err != nil {
		return fmt.Errorf("adoption: manifest: %w", err)
	}
	tmp := filepath.Join(b.Dir, manifestName+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("adoption: manifest: %w", err)
	}
	return os.Rename(tmp, filepath.Join(b.Dir, manifestName))
}

// OpenBackup reads a backup's manifest.
func OpenBackup(dir string) (*Backup, error) {
	data, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, fmt.Errorf("adoption: backup %s: %w", dir, err)
	}
	b := &Backup{Dir: dir}
	if err := json.Unmarshal(data, &b.Manifest); err != nil {
		return nil, fmt.Errorf("adoption: backup %s: %w", dir, err)
	}
	return b, nil
}

// Version reads the backup's set ("orig", "both", "moved") of the files;
// a file a set does not hold is as in orig.
func (b *Backup) Version(set string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range b.Files {
		data, err := os.ReadFile(filepath.Join(b.Dir, set, f))
		if errors.Is(err, fs.ErrNotExist) && set != "orig" {
			data, err = os.ReadFile(filepath.Join(b.Dir, "orig", f))
		}
		if err != nil {
			return nil, fmt.Errorf("adoption: backup: %w", err)
		}
		out[f] = data
	}
	return out, nil
}

// WriteFiles replaces each file's contents, keeping its mode, through a
// rename so that the web server never reads half a file.
func WriteFiles(files map[string][]byte) error {
	for f, data := range files {
		mode := os.FileMode(0o644)
		if st, err := os.Stat(f); err == nil {
			mode = st.Mode().Perm()
		}
		tmp := f + ".ramjet-adopt.tmp"
		if err := os.WriteFile(tmp, data, mode); err != nil {
			return fmt.Errorf("adoption: write %s: %w", f, err)
		}
		if err := os.Rename(tmp, f); err != nil {
			return fmt.Errorf("adoption: write %s: %w", f, err)
		}
	}
	return nil
}
