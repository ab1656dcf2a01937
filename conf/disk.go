package conf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Disk is the cache's disk tier: a copy of the public cache kept across
// restarts. Off unless Path is set.
type Disk struct {
	// Path is an existing directory the service user can write; the tier
	// keeps objects/ and tmp/ in it (tmp/ on the same filesystem, so a
	// copy appears whole by a rename).
	Path string `yaml:"path"`
	// Size bounds the bytes of the files kept; at least 1MiB.
	Size Size `yaml:"size"`
}

func (d *Disk) validate(p *problems) {
	if d.Path == "" {
		if d.Size != 0 {
			p.add("cache.disk.size", "is set but cache.disk.path is not: set both to turn the disk tier on")
		}
		return
	}
	p.minSize("cache.disk.size", d.Size, MiB)
	if !filepath.IsAbs(d.Path) {
		p.add("cache.disk.path", fmt.Sprintf("%q must be an absolute path", d.Path))
		return
	}
	if err := probeDir(d.Path); err != nil {
		p.add("cache.disk.path", err.Error())
	}
}

// probeDir checks that dir exists, is a directory, and takes a file
// created in its tmp/ and renamed out of it: what every copy does.
func probeDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%q is not a directory", dir)
	}
	if err := writableTree(filepath.Join(dir, "objects")); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("not writable: %w", err)
	}
	f, err := os.CreateTemp(tmp, "probe.*")
	if err != nil {
		return fmt.Errorf("not writable: %w", err)
	}
	name := f.Name()
	err = f.Close()
	to := filepath.Join(dir, ".probe")
	if err == nil {
		if err = os.Rename(name, to); err != nil {
			err = fmt.Errorf("cannot rename out of %s (another filesystem?): %w", tmp, err)
		}
	}
	return errors.Join(err, removeIfThere(name), removeIfThere(to))
}

func removeIfThere(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// writableTree checks that this user may create and delete files in dir
// and in each directory just under it, where they exist: a run as
// another user (root) leaves them to that user, and every copy and
// purge under them would then fail.
func writableTree(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	dirs := []string{dir}
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(dir, e.Name()))
		}
	}
	for _, d := range dirs {
		if err := unix.Access(d, unix.W_OK|unix.X_OK); err != nil {
			return fmt.Errorf("%s is not writable by uid %d (made by a run as another user? chown -R the path to the service's user): %w", d, os.Getuid(), err)
		}
	}
	return nil
}
