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
func Rollback(ctx context.Context, web WebServer, b *Backup, log io.Writer) error {
	both, err := b.Version("both")
	if err != nil {
		return err
	}
	orig, err := b.Version("orig")
	if err != nil {
		return err
	}
	migrateQueuedConnections(log)
	if b.RamjetPID > 0 && alive(b.RamjetPID) {
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
		fmt.Fprintf(log, "ramjet adopt: stopping ramjet (pid %d)\n", b.RamjetPID)
		if err := stop(ctx, b.RamjetPID); err != nil {
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
	return os.Rename(filepath.Join(b.Dir, manifestName), filepath.Join(b.Dir, manifestName+".rolled-back"))
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
