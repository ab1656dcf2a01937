package landlock

import (
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// Subcommand is the launcher's name among ramjet's commands. It is not
// for people: ramjet starts it with Args.
const Subcommand = "__confine"

// Args are the launcher's arguments after Subcommand: run prog with args
// confined to r. fd is the descriptor the launcher itself was started
// through (/proc/self/fd/N: a worker's user may not reach ramjet's
// binary by its path), closed before prog runs; -1 when none.
func (r Rules) Args(fd int, prog string, args []string) []string {
	out := make([]string, 0, 2*len(r.Paths)+len(args)+4)
	out = append(out, "--fd", strconv.Itoa(fd))
	for _, p := range r.Paths {
		out = append(out, "--read", p)
	}
	return append(append(out, "--", prog), args...)
}

// Main is the launcher: it reads Args's output, confines itself and
// becomes the program with env. It returns only on failure.
func Main(args, env []string) error {
	r, fd, argv, err := parse(args)
	if err != nil {
		return err
	}
	if fd > 2 {
		unix.CloseOnExec(fd)
	}
	return r.Exec(argv[0], argv, env)
}

// parse reads Args's output.
func parse(args []string) (r Rules, fd int, argv []string, err error) {
	fd = -1
	for len(args) > 0 {
		switch a := args[0]; {
		case a == "--":
			if len(args) < 2 || args[1] == "" {
				return r, fd, nil, errors.New("landlock: no program after --")
			}
			return r, fd, args[1:], nil
		case (a == "--fd" || a == "--read") && len(args) >= 2:
			if a == "--read" {
				if args[1] == "" || args[1][0] != '/' {
					return r, fd, nil, fmt.Errorf("landlock: --read %q: want an absolute path", args[1])
				}
				r.Paths = append(r.Paths, args[1])
			} else if fd, err = strconv.Atoi(args[1]); err != nil {
				return r, fd, nil, fmt.Errorf("landlock: --fd %q: %w", args[1], err)
			}
			args = args[2:]
		default:
			return r, fd, nil, fmt.Errorf("landlock: unexpected argument %q (want --fd N, --read PATH..., -- PROGRAM ARGS...)", a)
		}
	}
	return r, fd, nil, errors.New("landlock: no -- PROGRAM")
}
