package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// A serveFunc answers ln's connections from pages until ctx is done, then
// closes ln and its connections and returns.
type serveFunc func(ctx context.Context, ln net.Listener, pages *store) error

func main() {
	mode := os.Getenv("FLOOR_MODE")
	sendfile := os.Getenv("FLOOR_SENDFILE") == "1"
	if err := run(os.Args[1:], mode, sendfile); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(args []string, mode string, sendfile bool) error {
	serve, err := modeServer(mode)
	if err != nil {
		return err
	}
	o := parseArgs(args)
	switch o.command {
	case "version":
		fmt.Println(versionLine(mode, sendfile))
		return nil
	case "serve":
	default:
		return errors.New("usage: floor serve --listen ADDR --origin URL | floor version")
	}
	if o.listen == "" || o.origin == "" {
		return errors.New("serve needs --listen and --origin")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	pages := newStore(strings.TrimSuffix(o.origin, "/"), sendfile)
	return errors.Join(serve(ctx, ln, pages), pages.close())
}

func modeServer(mode string) (serveFunc, error) {
	switch mode {
	case "", "gor":
		return serveGor, nil
	case "evl":
		return serveEvl, nil
	case "fh":
		return serveFh, nil
	case "own":
		return serveOwn(true), nil
	case "ownheld":
		return serveOwn(false), nil
	}
	return nil, fmt.Errorf("FLOOR_MODE=%q: want gor, evl, fh, own or ownheld", mode)
}

// versionLine is what bench/run records as ramjet's version: it must say
// that this is not ramjet.
func versionLine(mode string, sendfile bool) string {
	if mode == "" {
		mode = "gor"
	}
	if sendfile {
		return "floor " + mode + " sendfile"
	}
	return "floor " + mode
}

// options are the parts of ramjet's command line the floor uses.
type options struct {
	command, listen, origin string
}

// parseArgs reads ramjet's command line loosely: the command first, then
// --listen and --origin (as `--flag value` or `--flag=value`, one dash or
// two); every other word is ignored, so that the harness's ramjet flags
// do not stop the floor.
func parseArgs(args []string) options {
	var o options
	if len(args) == 0 {
		return o
	}
	o.command = args[0]
	for i := 1; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			continue
		}
		name, value, inline := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if name != "listen" && name != "origin" {
			continue
		}
		if !inline && i+1 < len(args) {
			i++
			value = args[i]
		}
		if name == "listen" {
			o.listen = value
		} else {
			o.origin = value
		}
	}
	return o
}
