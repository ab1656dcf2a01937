package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/ramjet-proxy/ramjet/top"
)

// topCmd runs the live view (package top) in the terminal on stdin and
// stdout, with the operator's token.
func topCmd(args []string, stdout, stderr io.Writer) int {
	a, err := parseTop(args, stderr)
	if err != nil {
		return 2
	}
	base, tok, err := adminOf(a.adminFlags)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	in, out := int(os.Stdin.Fd()), int(os.Stdout.Fd())
	if !term.IsTerminal(in) || !term.IsTerminal(out) {
		fmt.Fprintln(stderr, "ramjet top: stdin and stdout must be a terminal (use /stats or /metrics from scripts)")
		return 2
	}
	old, err := term.MakeRaw(in)
	if err != nil {
		fmt.Fprintln(stderr, "ramjet top:", err)
		return 1
	}
	defer term.Restore(in, old) //nolint:errcheck // nothing more to do if the terminal is gone
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	src := &top.Source{Admin: base, Token: tok, Client: &http.Client{Timeout: 2 * time.Second}}
	size := func() (int, int) {
		w, h, err := term.GetSize(out)
		if err != nil {
			return 0, 0
		}
		return w, h
	}
	err = top.Run(ctx, top.Config{Source: src, Every: a.every, Size: size}, readKeys(os.Stdin), stdout)
	if err != nil {
		term.Restore(in, old) //nolint:errcheck // restored before the message is printed
		fmt.Fprintln(stderr, "ramjet top:", err)
		return 1
	}
	return 0
}

// topArgs is top's command line.
type topArgs struct {
	adminFlags
	every time.Duration
}

// parseTop reads top's command line; a bad one is reported on stderr.
func parseTop(args []string, stderr io.Writer) (topArgs, error) {
	var a topArgs
	fs := flag.NewFlagSet("top", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	fs.DurationVar(&a.every, "interval", time.Second, "refresh interval")
	if err := fs.Parse(args); err != nil {
		return a, err
	}
	if fs.NArg() > 0 || a.every < 100*time.Millisecond {
		fmt.Fprintln(stderr, "ramjet top: usage: ramjet top [--config FILE] [--admin URL] [--token TOKEN] [--interval DUR ≥ 100ms]")
		return a, errUsage
	}
	return a, nil
}

// readKeys sends the bytes read from r until it fails, then closes the
// channel. The goroutine ends with the process: a read of a terminal
// cannot be interrupted, and ramjet top exits when the view does.
func readKeys(r io.Reader) <-chan byte {
	keys := make(chan byte, 16)
	go func() {
		defer close(keys)
		buf := make([]byte, 16)
		for {
			n, err := r.Read(buf)
			for _, b := range buf[:n] {
				keys <- b
			}
			if err != nil {
				return
			}
		}
	}()
	return keys
}
