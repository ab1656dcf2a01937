package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy"
)

// handoverTimeout bounds how long an upgrade waits for the new process
// to serve; past it the new one is stopped and the old one serves on.
const handoverTimeout = time.Minute

// handoverLinger is how long the old process keeps serving the
// connections it has after the new one took the listeners: each
// HTTP/1.1 client gets its next answer with "Connection: close" and
// opens its next connection to the new process, so that no request is
// sent on a connection closed under it. Then the usual drain follows.
const handoverLinger = 2 * time.Second

// readyLine is what a new process writes to the handover pipe once it
// serves.
const readyLine = "ready\n"

// upgrade starts the binary now on disk (a package upgrade replaced it)
// with this process's arguments and environment, hands it the listening
// sockets, and waits until it says it serves. It returns the new
// process's pid; on an error the new process is gone and this one
// serves on.
func (d *daemon) upgrade() (int, error) {
	bin, err := os.Executable() // on Linux, the path even after the file was replaced
	if err != nil {
		return 0, fmt.Errorf("upgrade: the binary's path: %w", err)
	}
	files, names, err := d.socks.files()
	if err != nil {
		return 0, fmt.Errorf("upgrade: %w", err)
	}
	defer closeFiles(files) // the new process has its own copies once started
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("upgrade: %w", err)
	}
	defer r.Close()
	env := append(os.Environ(), envHandoverFDs+"="+strings.Join(names, " "),
		envHandoverReady+"="+strconv.Itoa(firstFD+len(files)))
	if path := d.journal.name(); path != "" {
		env = append(env, envHandoverJournal+"="+path)
	}
	proc, err := spawn(bin, env, append(files, w))
	_ = w.Close() // the new process holds the write end; EOF then means it is gone
	if err != nil {
		return 0, fmt.Errorf("upgrade: start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- waitExit(proc) }() // reaps it should it fail
	if err := waitReady(r, handoverTimeout); err != nil {
		_ = proc.Kill() // may have exited already
		return 0, fmt.Errorf("upgrade: %s did not take over: %w (%v)", bin, err, exitStatus(<-exited))
	}
	return proc.Pid, nil
}

// spawn starts bin with this process's arguments, env, its standard
// streams and files as descriptors 3 on. Not os/exec: it would put the
// files in blocking mode, and with them the listening sockets this
// process still accepts on (one open file description), whose accept
// would then block a thread that closing the listener cannot wake.
func spawn(bin string, env []string, files []*os.File) (*os.Process, error) {
	fds := []uintptr{0, 1, 2}
	for _, f := range files {
		fd, err := fdOf(f)
		if err != nil {
			return nil, err
		}
		fds = append(fds, fd)
	}
	pid, err := syscall.ForkExec(bin, append([]string{bin}, os.Args[1:]...), &syscall.ProcAttr{Env: env, Files: fds})
	runtime.KeepAlive(files) // open until the child has its copies
	if err != nil {
		return nil, err
	}
	return os.FindProcess(pid) // cannot fail on Unix
}

// fdOf is f's descriptor, left as it is (f.Fd would make it blocking).
func fdOf(f *os.File) (uintptr, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", f.Name(), err)
	}
	var fd uintptr
	if err := rc.Control(func(d uintptr) { fd = d }); err != nil {
		return 0, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return fd, nil
}

func waitExit(p *os.Process) error {
	st, err := p.Wait()
	if err != nil {
		return err
	}
	if !st.Success() {
		return errors.New(st.String())
	}
	return nil
}

// waitReady reads the pipe until the ready line, its end (the process
// exited) or the timeout.
func waitReady(r *os.File, timeout time.Duration) error {
	if err := r.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	var got []byte
	buf := make([]byte, 64)
	for !bytes.Contains(got, []byte(readyLine)) {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("not serving within %v", timeout)
		}
		if err != nil {
			return errors.New("it exited before serving")
		}
	}
	return nil
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// serving tells whoever waits that this process serves: the old process
// of an upgrade, through its pipe, or systemd (Type=notify). The pipe
// is closed after.
func (s *sockets) serving() error {
	if s.ready == nil {
		return sdNotify("READY=1")
	}
	_, err := s.ready.WriteString(readyLine)
	return errors.Join(err, s.ready.Close())
}

// sdNotify sends state to systemd when it asked for notifications
// (NOTIFY_SOCKET, Type=notify); otherwise it does nothing.
func sdNotify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	if path[0] == '@' {
		path = "\x00" + path[1:] // an abstract socket
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", state, err)
	}
	_, err = c.Write([]byte(state))
	return errors.Join(err, c.Close())
}

// upgradeBySignal runs an upgrade on SIGUSR2 and reports whether the new
// process took over; when it did not, this one serves on and says why.
func (d *daemon) upgradeBySignal() bool {
	d.log.Info("upgrading: starting the binary on disk", "signal", "SIGUSR2")
	checked := d.checkpoint()
	pid, err := d.upgrade()
	if err != nil {
		if checked {
			d.uncheckpoint()
		}
		d.log.Error("upgrade failed; this process serves on", "err", err)
		return false
	}
	// systemd follows the new process (Type=notify); without it, nobody asked.
	if err := sdNotify("MAINPID=" + strconv.Itoa(pid)); err != nil {
		d.log.Warn("telling systemd the new main process", "pid", pid, "err", err)
	}
	d.log.Info("upgraded: the new process serves; draining", "new_pid", pid,
		"timeout", time.Duration(d.cfg.Server.DrainTimeout))
	return true
}

// handOver stops accepting (the new process accepts on the same
// sockets from now on), answers every HTTP/1.1 request with
// "Connection: close", and waits up to handoverLinger for the clients to
// leave before the drain closes what is left.
func (d *daemon) handOver(servers ...*proxy.Server) {
	d.closing.Store(true)
	if err := d.socks.stopAccepting(); err != nil {
		d.log.Warn("closing the listeners handed over", "err", err)
	}
	open := func() (n int64) {
		for _, s := range servers {
			if s != nil {
				n += s.ConnStats().Open
			}
		}
		return n + d.edge.openConns()
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(handoverLinger)
	for open() > 0 {
		select {
		case <-tick.C:
		case <-deadline:
			return
		}
	}
}

// closeWhenHandedOver has h's HTTP/1.1 answers close their connection
// once the listeners were handed over: the client sends its next request
// to the new process instead of on a connection about to close. HTTP/2
// and HTTP/3 drop the field; their GOAWAY does the same.
func (d *daemon) closeWhenHandedOver(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		h(ctx)
		d.closeIfHandedOver(ctx)
	}
}

func (d *daemon) closeIfHandedOver(ctx *fasthttp.RequestCtx) {
	if d.closing.Load() {
		ctx.SetConnectionClose()
	}
}

// closeWhenHandedOverHit is closeWhenHandedOver for the answers the main
// listener gives without its handler (proxy.ServerConfig.Inline).
func (d *daemon) closeWhenHandedOverHit(hit func(*fasthttp.RequestCtx) bool) func(*fasthttp.RequestCtx) bool {
	return func(ctx *fasthttp.RequestCtx) bool {
		if !hit(ctx) {
			return false
		}
		d.closeIfHandedOver(ctx)
		return true
	}
}
