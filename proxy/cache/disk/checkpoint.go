package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Checkpoint has the writer apply every purge and write every copy
// queued so far, flushes the filesystem and leaves the handover marker:
// an upgrade's successor that loads the files then trusts them as after
// a clean stop (Loaded.Handover), provided the purges this process
// applies from now on reach it too (the caller's part). It needs the
// writer started.
//
// From then on the directory is the successor's: this process writes no
// file (a copy, a gap's mark) until Uncheckpoint. The successor knows
// only the files it loaded and those it writes, and only those meet its
// purges; a page this process stored while it drained, written after
// the load, would outlive a purge and load fresh at the next start. It
// still deletes what its own purges cover: a deleted file is at worst a
// copy lost, never a page served that should not be.
func (t *Tier) Checkpoint() error {
	done := make(chan struct{})
	select {
	case t.flush <- flush{done: done, handOver: true}:
		<-done
	case <-t.done:
		return errors.New("disk: checkpoint: the writer is stopped")
	}
	if err := syncFS(t.cfg.Path); err != nil {
		return err
	}
	return t.mark(handoverFile)
}

// Uncheckpoint removes the handover marker of an upgrade that failed;
// the directory is this process's again, and gets the gap marks it kept
// in the meantime.
func (t *Tier) Uncheckpoint() error {
	t.handed.Store(false)
	if marks := t.running(); len(marks) > 0 {
		t.markGaps(marks) // kept in memory meanwhile, timers running
	}
	err := os.Remove(filepath.Join(t.cfg.Path, handoverFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("disk: %w", err)
	}
	return nil
}

// mark creates the marker name durably.
func (t *Tier) mark(name string) error {
	root := t.cfg.Path
	f, err := os.Create(filepath.Join(root, name))
	if err != nil {
		return fmt.Errorf("disk: %s marker: %w", name, err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("disk: %s marker: %w", name, err)
	}
	return syncDir(root)
}
