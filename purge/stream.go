package purge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The subscriber reads the stream from the last entry it saw, in
// batches. Each batch is read in one MULTI/EXEC together with a look at
// the stream and at the epoch key, so the batch and the look are one
// snapshot:
//
//	MULTI
//	XREAD COUNT n STREAMS key lastID
//	EXISTS key
//	XINFO STREAM key
//	GET key:epoch
//	EXEC
//
// and a gap is noticed on the first read after it happens, whatever caused
// it (reconnect, Redis restart, trimming while this node was slow). When
// a batch comes back short the node is caught up, and it waits for more
// with XREAD COUNT 1 BLOCK 1000 from the same ID, whose reply only wakes
// it: entries are applied from snapshots only.
//
// A gap is detected exactly on Redis 7 and later, which count the entries
// ever added to a stream: entries trimmed = entries-added - length, and
// the node misses something iff more were trimmed than it has seen
// (MAXLEN trims from the head; nobody may XDEL). Older Redis only gives
// the first entry's ID, and a node whose last ID is below it marks a gap even
// if the entry right after it survived.

// cursor is the subscriber's position in the stream and what it knew of
// Redis at its last look. The subscriber goroutine owns it.
type cursor struct {
	placed bool     // positioned at least once
	id     streamID // last entry read; zero before any
	seen   int64    // entries ever added to the stream up to and including id
	epoch  string   // value of the epoch key
}

// look is what one pipeline saw of the stream and the epoch key.
type look struct {
	exists bool
	info   *redis.XInfoStream // when exists
	last   streamID           // last generated ID, when exists
	epoch  string
}

// runSubscriber places the cursor at the end of the stream, then reads
// and applies entries until ctx ends, retrying with backoff on errors.
func (f *Fanout) runSubscriber(ctx context.Context) {
	defer f.wg.Done()
	var (
		bo   backoff
		late bool // a placement failed: the node ran without the stream
		down bool // the last attempt failed, and it was logged
	)
	for ctx.Err() == nil {
		full, err := f.next(ctx, late)
		if err == nil {
			if down || !f.everUp.Load() {
				f.log.Info("redis: reading purges", "stream", f.cfg.Stream, "after", f.cur.id.String())
			}
			down = false
			f.subUp.Store(true)
			f.everUp.Store(true)
			bo.reset()
			if !full {
				f.caught.close()
				err = f.await(ctx)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			late = late || !f.cur.placed
			f.subUp.Store(false)
			if !down {
				down = true
				f.log.Warn("redis: cannot read purges, retrying", "err", err)
			}
			if !bo.wait(ctx) {
				return
			}
		}
	}
}

// next places the cursor if it is not yet, else applies one batch.
func (f *Fanout) next(ctx context.Context, late bool) (full bool, err error) {
	if f.cur.placed {
		return f.read(ctx)
	}
	return false, f.place(ctx, late)
}

// place positions the cursor at the end of the stream: a node that just
// started has an empty cache and needs no history. If Redis was
// unreachable when the node started (late), the node may have cached
// pages meanwhile whose purges it will never read: a gap.
func (f *Fanout) place(ctx context.Context, late bool) error {
	tx := f.sub.TxPipeline()
	ex, info, ep := f.queueLook(ctx, tx)
	_, _ = tx.Exec(ctx) // each command's error is checked by look
	l, err := f.look(ctx, ex, info, ep)
	if err != nil {
		return err
	}
	f.cur.placed = true
	f.cur.moveTo(l)
	if !f.everUp.Load() {
		f.checkPersistence(ctx)
	}
	if late {
		f.gap(gapLate)
	}
	return nil
}

// checkPersistence warns when Redis keeps nothing across its restarts:
// each restart then loses the stream and the epoch key, a gap on every
// node. A Redis that refuses CONFIG (managed services) is not judged.
func (f *Fanout) checkPersistence(ctx context.Context) {
	aof, err := f.sub.ConfigGet(ctx, "appendonly").Result()
	if err != nil {
		f.log.Debug("redis: cannot read its persistence settings", "err", err)
		return
	}
	if aof["appendonly"] == "yes" {
		return
	}
	save, err := f.sub.ConfigGet(ctx, "save").Result()
	if err == nil && save["save"] != "" {
		f.log.Info("redis persists by snapshots only: a restart loses the purges since the last one, a gap on every node (appendonly yes avoids it)",
			"save", save["save"])
		return
	}
	f.log.Warn("redis persists nothing: every Redis restart is a gap on every node (set appendonly yes)")
}

// await blocks until the stream has entries after the cursor, or for
// readBlock. Its reply is dropped: entries are applied from snapshots.
func (f *Fanout) await(ctx context.Context) error {
	err := f.sub.XRead(ctx, &redis.XReadArgs{
		Streams: []string{f.cfg.Stream, f.cur.id.String()},
		Count:   1,
		Block:   readBlock,
	}).Err()
	if err != nil && !errors.Is(err, redis.Nil) { // Nil: nothing within readBlock
		return fmt.Errorf("purge: xread block %s: %w", f.cfg.Stream, err)
	}
	return nil
}

// read takes one snapshot and applies its batch, or marks a gap if the
// snapshot shows one. full reports a batch of readCount entries: there
// may be more right away.
func (f *Fanout) read(ctx context.Context) (full bool, err error) {
	tx := f.sub.TxPipeline()
	xr := tx.XRead(ctx, &redis.XReadArgs{
		Streams: []string{f.cfg.Stream, f.cur.id.String()},
		Count:   readCount,
		Block:   -1, // no BLOCK: this is a snapshot
	})
	ex, info, ep := f.queueLook(ctx, tx)
	_, _ = tx.Exec(ctx) // each command's error is checked below
	streams, err := xr.Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		f.applyPendingGap()
		return false, fmt.Errorf("purge: xread %s: %w", f.cfg.Stream, err)
	}
	l, err := f.look(ctx, ex, info, ep)
	if err != nil {
		f.applyPendingGap()
		return false, err
	}
	if reason := f.cur.gap(l); reason != nil {
		// The purges still in the stream are read from where they start
		// and applied exactly, before the gap covers the ones that are
		// lost: a purge published to a restarted Redis is never only
		// stale on this node.
		f.applyPendingGap()
		f.cur.resume(l, reason)
		f.pending = reason
		return true, nil
	}
	n := 0
	for _, s := range streams {
		for _, msg := range s.Messages {
			f.apply(msg)
			n++
		}
	}
	f.applyPendingGap()
	return n == readCount, nil
}

// applyPendingGap applies the gap read noticed, if any.
func (f *Fanout) applyPendingGap() {
	if f.pending != nil {
		f.gap(f.pending)
		f.pending = nil
	}
}

func (f *Fanout) queueLook(ctx context.Context, pipe redis.Pipeliner) (*redis.IntCmd, *redis.XInfoStreamCmd, *redis.StringCmd) {
	return pipe.Exists(ctx, f.cfg.Stream), pipe.XInfoStream(ctx, f.cfg.Stream), pipe.Get(ctx, f.epKey)
}

// look reads the replies of queueLook, creating the epoch key if missing.
func (f *Fanout) look(ctx context.Context, ex *redis.IntCmd, info *redis.XInfoStreamCmd, ep *redis.StringCmd) (look, error) {
	var l look
	n, err := ex.Result()
	if err != nil {
		return l, fmt.Errorf("purge: exists %s: %w", f.cfg.Stream, err)
	}
	if n > 0 { // else XINFO failed with "no such key"
		if l.info, err = info.Result(); err != nil {
			return l, fmt.Errorf("purge: xinfo stream %s: %w", f.cfg.Stream, err)
		}
		if l.last, err = parseStreamID(l.info.LastGeneratedID); err != nil {
			return l, err
		}
		l.exists = true
	}
	l.epoch, err = ep.Result()
	if errors.Is(err, redis.Nil) {
		l.epoch, err = f.newEpoch(ctx)
	}
	if err != nil {
		return l, fmt.Errorf("purge: get %s: %w", f.epKey, err)
	}
	return l, nil
}

// newEpoch sets the epoch key if it is still missing and returns its value:
// every node that finds it missing ends up with the same one.
func (f *Fanout) newEpoch(ctx context.Context) (string, error) {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	if err := f.sub.SetNX(ctx, f.epKey, hex.EncodeToString(b[:]), 0).Err(); err != nil {
		return "", fmt.Errorf("purge: setnx %s: %w", f.epKey, err)
	}
	v, err := f.sub.Get(ctx, f.epKey).Result()
	if err != nil {
		return "", fmt.Errorf("purge: get %s: %w", f.epKey, err)
	}
	return v, nil
}

// apply applies one entry unless this node published it.
func (f *Fanout) apply(msg redis.XMessage) {
	id, err := parseStreamID(msg.ID)
	if err != nil { // Redis generated it: cannot happen
		f.gap(&gapReason{"bad_id", err.Error()})
		return
	}
	f.cur.id = id
	f.cur.seen++
	if err := f.verify(msg); err != nil {
		f.reject(msg, err) // passed, not a gap: nothing was lost
		return
	}
	if f.echo(msg.Values) {
		return
	}
	raw, _ := msg.Values["cmd"].(string)
	var cmd Command
	if err := json.Unmarshal([]byte(raw), &cmd); err != nil {
		// A purge this node cannot read is a purge it misses.
		f.gap(&gapReason{"undecodable", "undecodable entry " + msg.ID + ": " + err.Error()})
		return
	}
	if cmd.Private {
		return // scoped to a client of the node that published it
	}
	if cmd.Gap { // another node dropped purges: this node's own policy
		cmd = f.gapCommand()
	}
	f.local.Purge(cmd)
	if s, _ := msg.Values["ts"].(string); s != "" {
		if ts, err := strconv.ParseInt(s, 10, 64); err == nil {
			// Clocks of different hosts may disagree: never negative.
			f.m.lag.Update(max(time.Since(time.Unix(0, ts)).Seconds(), 0))
		}
	}
	f.m.applied.Inc()
}

// gap applies the node's gap policy: it may have missed purges it cannot
// name.
func (f *Fanout) gap(r *gapReason) {
	f.m.set.GetOrCreateCounter(`ramjet_purge_fanout_gaps_total{reason="` + r.label + `"}`).Inc()
	if f.cfg.Gap == GapFlush {
		f.m.flushes.Inc()
		f.local.Purge(flushAll())
		f.log.Warn("purge fan-out gap: flushed the whole cache", "reason", r.why)
		return
	}
	res := f.local.Purge(f.gapCommand())
	f.log.Warn("purge fan-out gap: every cached page is stale until refreshed",
		"reason", r.why, "grace", f.cfg.GapGrace, "entries", res.Stale)
}

// gapCommand is what the node applies for purges it cannot name.
func (f *Fanout) gapCommand() Command { return f.cfg.Gap.Command(f.cfg.GapGrace) }

// gapReason is why a node may have missed purges: label for the metric,
// why for the log.
type gapReason struct{ label, why string }

var (
	gapLate    = &gapReason{"late_start", "redis was unreachable when the node started"}
	gapEpoch   = &gapReason{"epoch", "redis instance changed (epoch key differs)"}
	gapDeleted = &gapReason{"deleted", "stream deleted"}
	gapBack    = &gapReason{"reset", "stream reset: last ID went backwards"}
	gapFewer   = &gapReason{"reset", "stream reset: fewer entries added than seen"}
	gapTrimmed = &gapReason{"trimmed", "stream trimmed past this node's position"}
	gapMaybe   = &gapReason{"trimmed", "stream trimmed past this node's position (Redis < 7: maybe not)"}
)

// resume places the cursor, after a gap, where reading on misses none of
// the entries still in the stream: after the last one read when the
// stream was only trimmed, else (a new stream, or none) at its start.
func (c *cursor) resume(l look, r *gapReason) {
	c.epoch = l.epoch
	switch r {
	case gapTrimmed:
		c.seen = l.info.EntriesAdded - l.info.Length // those trimmed count as seen
	case gapMaybe:
	default:
		c.id, c.seen = streamID{}, 0
	}
}

// moveTo places the cursor at the end of the stream as seen by l.
func (c *cursor) moveTo(l look) {
	c.epoch = l.epoch
	if !l.exists {
		c.id, c.seen = streamID{}, 0
		return
	}
	c.id, c.seen = l.last, l.info.EntriesAdded
}

// gap says why entries after the cursor may have been lost, or nil.
func (c *cursor) gap(l look) *gapReason {
	if l.epoch != c.epoch {
		return gapEpoch
	}
	if !l.exists {
		if c.id != (streamID{}) {
			return gapDeleted
		}
		return nil
	}
	if l.last.less(c.id) {
		return gapBack
	}
	inf := l.info
	if inf.RecordedFirstEntryID != "" { // Redis >= 7: entries-added is reported
		if inf.EntriesAdded < c.seen {
			return gapFewer
		}
		if inf.EntriesAdded-inf.Length > c.seen {
			return gapTrimmed
		}
		return nil
	}
	if inf.Length > 0 {
		first, err := parseStreamID(inf.FirstEntry.ID)
		if err != nil || c.id.less(first) {
			return gapMaybe
		}
	}
	return nil
}

// streamID is a Redis stream entry ID, "ms-seq".
type streamID struct{ ms, seq uint64 }

func parseStreamID(s string) (streamID, error) {
	ms, seq, ok := strings.Cut(s, "-")
	a, err1 := strconv.ParseUint(ms, 10, 64)
	b, err2 := strconv.ParseUint(seq, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return streamID{}, fmt.Errorf("purge: bad stream ID %q", s)
	}
	return streamID{a, b}, nil
}

func (a streamID) less(b streamID) bool {
	return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq)
}

func (a streamID) String() string {
	return strconv.FormatUint(a.ms, 10) + "-" + strconv.FormatUint(a.seq, 10)
}
