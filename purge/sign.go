package purge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fan-out entries are signed when the nodes share keys: whoever can write
// to Redis (a tenant's PHP, on a host where Redis listens on loopback
// without a password) must not purge, or flush, every node. An entry
// carries an HMAC-SHA256 over the stream key and its fields, made with the
// first key; a node accepts one made with any of its keys, so keys rotate
// without a lost purge: add the new key second everywhere, then move it
// first everywhere, then drop the old one. A node with keys ignores, counts
// and logs an entry none of them verifies, and moves past it: it is not a
// gap, and never a reason to flush. Without keys nothing is signed or
// checked.
//
// A signature says who published an entry, not that it is new: whoever
// can write to the stream can add a copy of a signed entry. A node skips
// a copy of one of the last recentEntries entries it verified, so that a
// copied purge of everything cannot flush it again and again; an older
// copy, or a copy a node reads before its original, still applies once.

var (
	// errUnverified is an entry that no key of the node verifies.
	errUnverified = errors.New("purge: fan-out entry not signed with a known key")
	// errCopy is a verified entry the node has read before.
	errCopy = errors.New("purge: fan-out entry is a copy of one already read")
)

// macField is the entry field holding the hex HMAC.
const macField = "mac"

// keyring is the keys a node signs with (the first) and verifies with
// (any). It is immutable; SetKeys swaps it whole.
type keyring [][]byte

func newKeyring(keys []string) *keyring {
	k := make(keyring, 0, len(keys))
	for _, s := range keys {
		k = append(k, []byte(s))
	}
	return &k
}

// SetKeys sets the keys entries are signed (with the first) and verified
// (with any) with, from the next entry on; none turns signing and
// checking off. Call it before Start to sign every entry; it is safe
// while the fan-out runs (a config reload).
func (f *Fanout) SetKeys(keys []string) { f.keys.Store(newKeyring(keys)) }

// entryValues are the fields of one published entry, signed when there
// are keys.
func (f *Fanout) entryValues(dst []any, p pending, cmd []byte) []any {
	ts := strconv.FormatInt(p.ts, 10)
	dst = append(dst[:0], "node", f.cfg.Node, "cmd", cmd, "ts", ts, procField, f.proc)
	if k := *f.keys.Load(); len(k) > 0 {
		dst = append(dst, macField, hex.EncodeToString(mac(k[0], f.cfg.Stream, f.cfg.Node, ts, cmd)))
	}
	return dst
}

// mac is the HMAC of one entry's fields and the stream they were added to.
// Each is length-prefixed, so no two field lists sign alike.
func mac(key []byte, stream, node, ts string, cmd []byte) []byte {
	h := hmac.New(sha256.New, key)
	var n [4]byte
	for _, field := range [][]byte{[]byte(stream), []byte(node), []byte(ts), cmd} {
		binary.BigEndian.PutUint32(n[:], uint32(len(field)))
		h.Write(n[:])
		h.Write(field)
	}
	return h.Sum(nil)
}

// verify checks an entry's signature against every key; with none, every
// entry passes.
func (f *Fanout) verify(msg redis.XMessage) error {
	k := *f.keys.Load()
	if len(k) == 0 {
		return nil
	}
	node, _ := msg.Values["node"].(string)
	ts, _ := msg.Values["ts"].(string)
	cmd, _ := msg.Values["cmd"].(string)
	got, _ := msg.Values[macField].(string)
	sum, err := hex.DecodeString(got)
	if err != nil || len(sum) != sha256.Size {
		return fmt.Errorf("%w: no valid %s field", errUnverified, macField)
	}
	for _, key := range k {
		if hmac.Equal(sum, mac(key, f.cfg.Stream, node, ts, []byte(cmd))) {
			if !f.recent.add(sigOf(sum)) {
				return errCopy
			}
			return nil
		}
	}
	return errUnverified
}

// recentEntries is how many signatures a node remembers to spot copies.
const recentEntries = 1 << 14

// sig is the part of a signature that tells entries apart.
type sig [16]byte

func sigOf(sum []byte) (s sig) {
	copy(s[:], sum)
	return s
}

// recentSigs are the signatures of the last verified entries, oldest
// overwritten first. Only the subscriber goroutine uses it.
type recentSigs struct {
	ring []sig
	next int // where the next signature goes once ring is full
	set  map[sig]struct{}
}

// add remembers s and reports whether it is new.
func (r *recentSigs) add(s sig) bool {
	if _, ok := r.set[s]; ok {
		return false
	}
	if r.set == nil {
		r.set = make(map[sig]struct{}, recentEntries)
	}
	if len(r.ring) < recentEntries {
		r.ring = append(r.ring, s)
	} else {
		delete(r.set, r.ring[r.next])
		r.ring[r.next] = s
		r.next = (r.next + 1) % recentEntries
	}
	r.set[s] = struct{}{}
	return true
}

// rejectLogEvery bounds the log lines about unverified entries: a flood
// of forged entries must not flood the log too.
const rejectLogEvery = time.Minute

// reject counts an entry that failed verification and logs it, the first
// at once and then at most one line per rejectLogEvery with the count of
// those not logged. Only the subscriber goroutine calls it.
func (f *Fanout) reject(msg redis.XMessage, err error) {
	if errors.Is(err, errCopy) {
		f.m.copies.Inc()
	} else {
		f.m.unverified.Inc()
	}
	f.rej.quiet++
	if now := time.Now(); now.Sub(f.rej.last) >= rejectLogEvery {
		node, _ := msg.Values["node"].(string)
		f.log.Warn("purge fan-out: ignored an entry (no key verifies it, or a copy of one already read)",
			"id", msg.ID, "claims_node", node, "err", err, "ignored_since_last_line", f.rej.quiet)
		f.rej.last, f.rej.quiet = now, 0
	}
}

// rejections is what reject remembers between entries.
type rejections struct {
	last  time.Time // last log line
	quiet int       // rejected entries since, that line's included
}
