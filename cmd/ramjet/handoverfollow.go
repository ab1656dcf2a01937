package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/ramjet-proxy/ramjet/purge"
)

// The new process's side of an upgrade's handover journal
// (diskhandover.go). It applies the old process's purges until the old
// process wrote its end or is gone. A journal it cannot trust (the old
// process could not write a purge and removed it, a line that does not
// parse, none to open) means purges it will never see: it applies the
// gap policy (purge.gap) then, and again once the old process is gone,
// for what that process applied after the journal broke.

// followEvery is how often the follower looks for new lines.
const followEvery = 10 * time.Millisecond

// journalFollower follows one journal. Its methods run on one goroutine
// (Start's), or on the caller's before Start.
type journalFollower struct {
	path   string
	f      *os.File    // nil: broken, or done
	fi     os.FileInfo // f's identity: the path must name it while the old process writes
	r      *bufio.Reader
	half   []byte // a line read before its end was written
	broken bool
	fol    followerDeps
	stop   context.CancelFunc
	done   chan struct{}
}

// followerDeps is what the follower acts on.
type followerDeps struct {
	apply func(purge.Command)
	gap   func(why string) // the gap policy on the whole cache
	gone  func() bool      // the old process ended
	log   *slog.Logger
}

// followJournal opens the journal at path and applies what it holds
// now. Unless it reports the journal ended, Start follows the rest. An
// error means the load must be treated as a gap: the returned follower,
// broken, then only waits for the old process to end (Start) to apply
// the gap once more.
func followJournal(path string, deps followerDeps) (jf *journalFollower, ended bool, err error) {
	jf = &journalFollower{path: path, fol: deps}
	defer func() { jf.broken = err != nil }()
	f, err := os.Open(path)
	if err != nil {
		return jf, false, fmt.Errorf("handover journal: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is no regular file", path)
	}
	if err != nil {
		return jf, false, errors.Join(fmt.Errorf("handover journal: %w", err), f.Close())
	}
	jf.f, jf.fi, jf.r = f, fi, bufio.NewReader(f)
	if ended, err = jf.catchUp(); err != nil {
		return jf, false, errors.Join(err, jf.closeFile())
	}
	if ended {
		return jf, true, jf.finish()
	}
	return jf, false, nil
}

// oldProcessGone is followerDeps.gone for the process that started this
// one: reaped, or exited and this process handed to another parent (a
// zombie nobody reaps still answers kill 0).
func oldProcessGone() func() bool {
	old := os.Getppid()
	return func() bool { return syscall.Kill(old, 0) == syscall.ESRCH || os.Getppid() != old }
}

// Start follows the journal on a goroutine of its own until the old
// process ended (or ctx, or Close).
func (jf *journalFollower) Start(ctx context.Context) {
	ctx, jf.stop = context.WithCancel(ctx)
	jf.done = make(chan struct{})
	go func() {
		defer close(jf.done)
		tick := time.NewTicker(followEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				jf.stopped()
				return
			case <-tick.C:
			}
			if jf.step() {
				return
			}
		}
	}()
}

// Close stops following and waits for the goroutine.
func (jf *journalFollower) Close() {
	if jf.stop == nil {
		return
	}
	jf.stop()
	<-jf.done
}

// step applies the lines written since the last step; it reports when
// following is over.
func (jf *journalFollower) step() bool {
	gone := jf.fol.gone() // before reading: the lines of an old process that ended are all there
	if !jf.broken {
		ended, err := jf.catchUp()
		if ended {
			jf.logErr(jf.finish())
			return true
		}
		if err == nil && !jf.stillNamed() {
			err = errors.New("the old process removed it: it could not write a purge")
		}
		if err != nil {
			jf.breakOff(err)
		}
	}
	if !gone {
		return false
	}
	if jf.broken {
		jf.fol.gap("the old process ended; it applied purges after its handover journal broke")
	}
	jf.logErr(jf.finish())
	return true
}

// stopped ends following when this process stops before the old one
// ended: the journal is nobody's any more (a temporary file would stay
// in the temporary directory), unless its name is another's by now.
func (jf *journalFollower) stopped() {
	if jf.f != nil && jf.stillNamed() {
		jf.logErr(jf.finish())
		return
	}
	jf.logErr(jf.closeFile())
}

// breakOff stops reading a journal that can no longer be trusted and
// applies the gap policy now.
func (jf *journalFollower) breakOff(err error) {
	jf.broken = true
	jf.fol.log.Error("upgrade: the handover journal cannot be followed", "err", err)
	jf.logErr(jf.closeFile())
	jf.fol.gap("purges the old process applied may be missing from its handover journal")
}

// stillNamed reports whether the path still names the file followed:
// the old process removes it when it could not write a purge.
func (jf *journalFollower) stillNamed() bool {
	fi, err := os.Stat(jf.path)
	return err == nil && os.SameFile(fi, jf.fi)
}

// catchUp applies the whole lines there are now; it reports the end.
func (jf *journalFollower) catchUp() (bool, error) {
	for {
		b, err := jf.r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			jf.half = append(jf.half, b...)
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("handover journal: %w", err)
		}
		if len(jf.half) > 0 {
			b, jf.half = append(jf.half, b...), nil
		}
		var l journalLine
		if err := json.Unmarshal(b, &l); err != nil {
			return false, fmt.Errorf("handover journal: line %.80q: %w", b, err)
		}
		if l.End {
			return true, nil
		}
		if l.Cmd != nil {
			l.Cmd.Before, l.Cmd.Grace = l.Before, l.Grace
			jf.fol.apply(*l.Cmd)
		}
	}
}

// finish closes the journal and removes it (best effort when broken: it
// is truncated at the next upgrade). Only a journal this follower
// followed to its end or its writer's exit is removed.
func (jf *journalFollower) finish() error {
	followed := jf.f != nil
	err := jf.closeFile()
	if followed {
		if rerr := os.Remove(jf.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("handover journal: %w", rerr))
		}
	}
	return err
}

func (jf *journalFollower) closeFile() error {
	if jf.f == nil {
		return nil
	}
	err := jf.f.Close()
	jf.f = nil
	return err
}

func (jf *journalFollower) logErr(err error) {
	if err != nil {
		jf.fol.log.Warn("upgrade: the handover journal", "err", err)
	}
}
