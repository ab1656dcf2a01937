package adoption

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Rollback undoes a switch in the order that refuses no request: the
// web server takes its public addresses again beside ramjet, ramjet
// stops (draining; its queued connections move to the web server's
// listeners), and the web server's files become what they were.
//
// A file edited since --apply left it is not overwritten: its edits
// would be lost. With force, it is kept beside the backup (current/)
// and rolled back all the same.
func Rollback(ctx context.Context, web WebServer, b *Backup, force bool, log io.Writer) error {
	both, err := b.Version("both")
	if err != nil {
		return err
	}
	orig, err := b.Version("orig")
	if err != nil {
		return err
	}
	if err := b.keepEdits(force, log); err != nil {
		return err
	}
	migrateQueuedConnections(log)
	serving := b.RamjetPID > 0 && alive(b.RamjetPID)
	if b.Service != nil {
		serving = PackageService.Active(ctx)
	}
	if serving {
		fmt.Fprintf(log, "ramjet adopt: web server: back on %v beside ramjet (reload)\n", b.Listens)
		if err := WriteFiles(both); err != nil {
			return err
		}
		if err := web.Test(ctx); err != nil {
			return errors.Join(fmt.Errorf("the web server refuses its files as they were while both served: %w", err), WriteFiles(orig))
		}
		if err := web.Reload(ctx); err != nil {
			return err
		}
		for _, a := range b.Listens {
			if err := waitListeners(ctx, a, "the web server's too", func(n int) bool { return n >= 2 }); err != nil {
				return fmt.Errorf("web server did not take %s back beside ramjet: %w", a, err)
			}
		}
		if err := b.stopRamjet(ctx, log); err != nil {
			return err
		}
	}
	if b.Service != nil && !serving {
		// A unit that stopped leaves systemd's sockets bound, without
		// SO_REUSEPORT on the web server's side once it is as it was.
		if err := PackageService.Stop(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintf(log, "ramjet adopt: web server: original configuration (reload)\n")
	if err := WriteFiles(orig); err != nil {
		return err
	}
	if err := web.Test(ctx); err != nil {
		return fmt.Errorf("the web server refuses its original configuration: %w", err)
	}
	if err := web.Reload(ctx); err != nil {
		return err
	}
	if err := waitListeners(ctx, b.Origin, "none", func(n int) bool { return n == 0 }); err != nil {
		return fmt.Errorf("the web server still listens on the origin address: %w", err)
	}
	if b.Service != nil {
		fmt.Fprintf(log, "ramjet adopt: %s as it was (active %v, enabled %v)\n", PackageService.Unit, b.Service.Active, b.Service.Enabled)
		if err := PackageService.Restore(ctx, *b.Service); err != nil {
			return err
		}
	}
	return os.Rename(filepath.Join(b.Dir, manifestName), filepath.Join(b.Dir, manifestName+".rolled-back"))
}

// stopRamjet stops the ramjet --apply started: the unit, or the
// process.
func (b *Backup) stopRamjet(ctx context.Context, log io.Writer) error {
	if b.Service != nil {
		fmt.Fprintf(log, "ramjet adopt: stopping %s\n", PackageService.Unit)
		return PackageService.Stop(ctx)
	}
	fmt.Fprintf(log, "ramjet adopt: stopping ramjet (pid %d)\n", b.RamjetPID)
	return stop(ctx, b.RamjetPID)
}

// alive reports whether pid runs (a zombie does not: nobody may reap
// it, in a container without an init).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// stop sends SIGTERM (ramjet drains) and waits for the process to go.
func stop(ctx context.Context, pid int) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop ramjet (pid %d): %w", pid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for alive(pid) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("ramjet (pid %d) did not stop within a minute", pid)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// keepEdits refuses (or, with force, copies to current/) the files that
// changed since --apply wrote them.
func (b *Backup) keepEdits(force bool, log io.Writer) error {
	moved, err := b.Version("moved")
	if err != nil {
		return err
	}
	var changed []string
	for f, want := range moved {
		got, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("adoption: %w", err)
		}
		if string(got) == string(want) {
			continue
		}
		changed = append(changed, f)
		if force {
			keep := filepath.Join(b.Dir, "current", f)
			if err := errors.Join(os.MkdirAll(filepath.Dir(keep), 0o700), os.WriteFile(keep, got, 0o600)); err != nil {
				return fmt.Errorf("adoption: keep %s: %w", f, err)
			}
			fmt.Fprintf(log, "ramjet adopt: %s was edited since --apply; its edits are kept in %s\n", f, keep)
		}
	}
	if len(changed) > 0 && !force {
		return fmt.Errorf("edited since --apply, and a rollback would lose the edits (bring them into %s, or --force to keep them aside and roll back):\n  %s",
			filepath.Join(b.Dir, "orig"), strings.Join(changed, "\n  "))
	}
	return nil
}
