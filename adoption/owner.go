package adoption

import (
	"bufio"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// FindOwner sets who owns the site: its PHP pool's user, else the owner
// of its document root; OwnerUID stays -1 when neither is known.
func (s *Site) FindOwner() {
	if s.PHP.User != "" {
		if u, err := user.Lookup(s.PHP.User); err == nil {
			if uid, err := strconv.Atoi(u.Uid); err == nil {
				s.OwnerUID, s.Owner = uid, u.Username
				return
			}
		}
	}
	if s.Root == "" {
		return
	}
	st, err := os.Stat(s.Root)
	if err != nil {
		return
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		s.OwnerUID = int(sys.Uid)
		s.Owner = strconv.Itoa(s.OwnerUID)
		if u, err := user.LookupId(s.Owner); err == nil {
			s.Owner = u.Username
		}
	}
}

// ReadPools reads the php-fpm pool files glob matches and maps each
// pool's listen address to its user: "/run/php/a.sock" for a socket,
// "127.0.0.1:9000" (and "9000" when only a port is given) for TCP.
func ReadPools(glob string) (map[string]string, error) {
	files, err := filepath.Glob(glob)
	if err != nil {
		return nil, fmt.Errorf("php-fpm pools %q: %w", glob, err)
	}
	pools := map[string]string{}
	for _, f := range files {
		if err := readPool(f, pools); err != nil {
			return nil, err
		}
	}
	return pools, nil
}

// readPool reads one pool file's [sections]: listen and user.
func readPool(file string, pools map[string]string) error {
	fh, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("php-fpm pool: %w", err)
	}
	defer fh.Close()
	var listen, usr string
	flush := func() {
		if listen != "" && usr != "" {
			pools[listen] = usr
			if isPort(listen) {
				pools["127.0.0.1:"+listen] = usr
			}
		}
		listen, usr = "", ""
	}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			flush()
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, ";") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimSpace(k) {
		case "listen":
			listen = v
		case "user":
			usr = v
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("php-fpm pool %s: %w", file, err)
	}
	return nil
}
