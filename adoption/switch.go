package adoption

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// WebServer is the adopted web server's own tools.
type WebServer interface {
	Test(ctx context.Context) error   // nginx -t, apachectl configtest
	Reload(ctx context.Context) error // a graceful reload
}

// Switch moves a web server behind ramjet in an order that refuses no
// request:
//
//  1. the web server's files become "both": its public listeners take
//     SO_REUSEPORT and it listens on the loopback origin address too;
//     it is tested (and so is the final "moved" version, and ramjet's
//     configuration) before it is reloaded;
//  2. the shadow check compares ramjet (on a preview port) with the web
//     server, site by site;
//  3. ramjet starts on the public addresses, on sockets this process
//     binds with SO_REUSEPORT (the kernel spreads new connections over
//     both servers), or on the web server's own sockets when it lends
//     them (Lender: Apache);
//  4. the web server's files become "moved": it closes its public
//     listeners, and the connections waiting in their queues move to
//     ramjet's (net.ipv4.tcp_migrate_req, which Switch turns on).
//
// Any failure before step 4 puts the original files back and reloads.
type Switch struct {
	Web    WebServer
	Plan   *Plan
	Files  map[string][]byte // the web server's files as read
	Both   map[string][]byte // the edited files, as they are in phase Both
	Moved  map[string][]byte // and in phase Moved
	Backup *Backup
	// Check runs `ramjet check` on the configuration ramjet will serve.
	Check func(ctx context.Context) error
	// Shadow compares the sites through ramjet and directly; nil skips.
	Shadow func(ctx context.Context) error
	// Start starts ramjet serving on the given listening sockets (named
	// "tcp:ADDR") and returns its process id once it serves.
	Start func(ctx context.Context, socks []*os.File, names []string) (int, error)
	// Serve, when set, starts ramjet instead of Start on sockets it
	// binds itself (systemd's, for ramjet.service) at the given addresses.
	Serve func(ctx context.Context, listens []string) (int, error)
	// ShadowOnly stops after the shadow check and puts everything back.
	ShadowOnly bool
	Log        io.Writer
}

// ErrChanged is returned when a file changed since the web server's
// configuration was read.
var ErrChanged = errors.New("changed since it was read")

// Run performs the switch.
func (s *Switch) Run(ctx context.Context) (err error) {
	if err := unchanged(s.Files); err != nil {
		return err
	}
	if err := s.Check(ctx); err != nil {
		return fmt.Errorf("ramjet check refuses the written configuration: %w", err)
	}
	if err := s.tested(ctx, s.Moved); err != nil {
		return err
	}
	if err := s.tested(ctx, s.Both); err != nil {
		return err
	}
	s.logf("web server: listening on %s too (reload)", s.Plan.Origin)
	reloaded := false
	defer func() {
		if err != nil && reloaded {
			err = errors.Join(err, s.restore(ctx))
		}
	}()
	reloaded = true
	if err := s.Web.Reload(ctx); err != nil {
		return err
	}
	if err := WaitListening(ctx, s.Plan.Origin); err != nil {
		return fmt.Errorf("web server after reload: %w", err)
	}
	if s.Shadow != nil {
		if err := s.Shadow(ctx); err != nil {
			return err
		}
	}
	if s.ShadowOnly {
		return s.restore(ctx)
	}
	migrateQueuedConnections(s.Log)
	pid, err := s.startRamjet(ctx)
	if err != nil {
		return err
	}
	s.Backup.RamjetPID = pid
	if err := s.Backup.Save(); err != nil {
		return err
	}
	reloaded = false // from here on ramjet serves: a failure leaves both serving
	s.logf("ramjet serves %s (pid %d); web server: leaving them (reload)", s.Plan.both(), pid)
	if err := WriteFiles(s.Moved); err != nil {
		return err
	}
	if err := s.Web.Reload(ctx); err != nil {
		return err
	}
	for _, a := range s.Backup.Listens {
		if err := waitListeners(ctx, a, "ramjet's alone", func(n int) bool { return n == 1 }); err != nil {
			return fmt.Errorf("the web server keeps listening beside ramjet: %w", err)
		}
	}
	return nil
}

// tested writes files and has the web server test them; on failure the
// originals are written back.
func (s *Switch) tested(ctx context.Context, files map[string][]byte) error {
	if err := WriteFiles(files); err != nil {
		return errors.Join(err, WriteFiles(s.Files))
	}
	if err := s.Web.Test(ctx); err != nil {
		return errors.Join(fmt.Errorf("the web server refuses the edited configuration (nothing was reloaded; its files are as they were): %w", err), WriteFiles(s.Files))
	}
	return nil
}

// restore writes the original files back and reloads.
func (s *Switch) restore(ctx context.Context) error {
	s.logf("web server: back to its original configuration (reload)")
	if err := errors.Join(WriteFiles(s.Files), s.Web.Reload(ctx)); err != nil {
		return err
	}
	return waitListeners(ctx, s.Plan.Origin, "none", func(n int) bool { return n == 0 })
}

func (s *Switch) startRamjet(ctx context.Context) (int, error) {
	var socks []*os.File
	var names []string
	defer func() {
		for _, f := range socks {
			_ = f.Close() // ramjet holds its own copies
		}
	}()
	if l, ok := s.Web.(Lender); ok {
		socks, err := l.Lend(ctx, s.Backup.Listens)
		if err != nil {
			return 0, err
		}
		for _, a := range s.Backup.Listens {
			names = append(names, "tcp:"+a)
		}
		return s.Start(ctx, socks, names)
	}
	if s.Serve != nil {
		return s.Serve(ctx, s.Backup.Listens)
	}
	for _, addr := range s.Backup.Listens {
		f, err := ListenReusePort(ctx, addr)
		if err != nil {
			return 0, err
		}
		socks, names = append(socks, f), append(names, "tcp:"+addr)
	}
	return s.Start(ctx, socks, names)
}

func (s *Switch) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "ramjet adopt: "+format+"\n", args...)
	}
}

// unchanged checks that every file is on disk as it was read.
func unchanged(files map[string][]byte) error {
	for f, want := range files {
		got, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("adoption: %w", err)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("adoption: %s: %w (run adopt again)", f, ErrChanged)
		}
	}
	return nil
}

// WaitListening waits until addr accepts connections.
func WaitListening(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		if err := dial(ctx, addr); err == nil {
			return nil
		} else if ctx.Err() != nil {
			return fmt.Errorf("%s does not accept connections: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
