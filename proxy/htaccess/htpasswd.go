package htaccess

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// passwordFile is one htpasswd file: user → hash, as Apache's htpasswd
// writes them (bcrypt "$2y$", APR1-MD5 "$apr1$", SHA1 "{SHA}", MD5-crypt
// "$1$", traditional DES crypt of 13 characters).
type passwordFile struct {
	users map[string]string
	ver   fileVersion

	mu sync.Mutex // guards ok
	// ok remembers credentials that verified, by their hash, so that a
	// bcrypt check (tens of ms) is paid once per user, not per request.
	ok map[[32]byte]string
}

// passwordFiles caches htpasswd files by path, stat'ed once per interval.
type passwordFiles struct {
	interval time.Duration
	mu       sync.Mutex // guards m
	m        map[string]*passwordEntry
}

type passwordEntry struct {
	checked time.Time
	file    *passwordFile // nil: unreadable
}

func (c *passwordFiles) get(path string, now time.Time, log *slog.Logger) *passwordFile {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[path]
	if e != nil && now.Sub(e.checked) < c.interval {
		return e.file
	}
	if c.m == nil {
		c.m = map[string]*passwordEntry{}
	}
	st, err := os.Stat(path)
	if err != nil {
		log.Error("htaccess: AuthUserFile", "file", path, "err", err)
		c.m[path] = &passwordEntry{checked: now}
		return nil
	}
	ver := versionOf(st)
	if e != nil && e.file != nil && e.file.ver == ver {
		e.checked = now
		return e.file
	}
	src, err := os.ReadFile(path)
	if err != nil {
		log.Error("htaccess: AuthUserFile", "file", path, "err", err)
		c.m[path] = &passwordEntry{checked: now}
		return nil
	}
	pf := parsePasswords(src)
	pf.ver = ver
	c.m[path] = &passwordEntry{checked: now, file: pf}
	return pf
}

func parsePasswords(src []byte) *passwordFile {
	pf := &passwordFile{users: map[string]string{}, ok: map[[32]byte]string{}}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		if !ok || user == "" {
			continue
		}
		if _, dup := pf.users[user]; !dup { // the first line of a user counts, as Apache's
			pf.users[user] = hash
		}
	}
	return pf
}

// verify checks user's password; it returns the user name as the file
// holds it.
func (pf *passwordFile) verify(user, pass string) (string, bool) {
	key := sha256.Sum256([]byte(user + "\x00" + pass))
	pf.mu.Lock()
	u, seen := pf.ok[key]
	pf.mu.Unlock()
	if seen {
		return u, true
	}
	hash, ok := pf.users[user]
	if !ok || !checkPassword(hash, pass) {
		return "", false
	}
	pf.mu.Lock()
	if len(pf.ok) >= 1024 {
		clear(pf.ok)
	}
	pf.ok[key] = user
	pf.mu.Unlock()
	return user, true
}

// checkPassword verifies pass against one htpasswd hash.
func checkPassword(hash, pass string) bool {
	switch {
	case strings.HasPrefix(hash, "$2y$"), strings.HasPrefix(hash, "$2a$"), strings.HasPrefix(hash, "$2b$"):
		return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pass)) == nil
	case strings.HasPrefix(hash, "$apr1$"):
		return constantEq(md5Crypt(pass, hash, "$apr1$"), hash)
	case strings.HasPrefix(hash, "$1$"):
		return constantEq(md5Crypt(pass, hash, "$1$"), hash)
	case strings.HasPrefix(hash, "{SHA}"):
		sum := sha1.Sum([]byte(pass))
		return constantEq("{SHA}"+base64.StdEncoding.EncodeToString(sum[:]), hash)
	case len(hash) == 13 && !strings.ContainsAny(hash, "$:{"):
		return constantEq(desCrypt(pass, hash[:2]), hash)
	}
	return false // unknown schemes ($5$, $6$, plain text) never verify
}

func constantEq(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

const itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// md5Crypt is the MD5-based crypt of FreeBSD, which APR uses with its
// own "$apr1$" magic: 1000 rounds of MD5 over password, salt and the
// previous digest, written in crypt's base-64 alphabet.
func md5Crypt(pass, setting, magic string) string {
	salt := strings.TrimPrefix(setting, magic)
	if i := strings.IndexByte(salt, '$'); i >= 0 {
		salt = salt[:i]
	}
	if len(salt) > 8 {
		salt = salt[:8]
	}
	pw := []byte(pass)
	alt := md5.Sum([]byte(pass + salt + pass))
	ctx := md5.New()
	ctx.Write([]byte(pass + magic + salt))
	for n := len(pw); n > 0; n -= 16 {
		ctx.Write(alt[:min(n, 16)])
	}
	for n := len(pw); n > 0; n >>= 1 {
		if n&1 != 0 {
			ctx.Write([]byte{0})
		} else {
			ctx.Write(pw[:1])
		}
	}
	final := ctx.Sum(nil)
	for i := 0; i < 1000; i++ {
		c := md5.New()
		if i&1 != 0 {
			c.Write(pw)
		} else {
			c.Write(final)
		}
		if i%3 != 0 {
			c.Write([]byte(salt))
		}
		if i%7 != 0 {
			c.Write(pw)
		}
		if i&1 != 0 {
			c.Write(final)
		} else {
			c.Write(pw)
		}
		final = c.Sum(final[:0])
	}
	out := []byte(magic + salt + "$")
	for _, g := range [][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		v := uint(final[g[0]])<<16 | uint(final[g[1]])<<8 | uint(final[g[2]])
		out = to64(out, v, 4)
	}
	return string(to64(out, uint(final[11]), 2))
}

func to64(dst []byte, v uint, n int) []byte {
	for ; n > 0; n-- {
		dst = append(dst, itoa64[v&0x3f])
		v >>= 6
	}
	return dst
}
