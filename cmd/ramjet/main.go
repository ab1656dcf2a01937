// Command ramjet is a caching reverse proxy for an existing nginx or
// Apache host. This package only wires: flags, config, signals, reload.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ramjet-proxy/ramjet/internal/landlock"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

const usage = `usage:
  ramjet serve [--config FILE] [--listen ADDR] [--origin URL] [--admin ADDR] [--admin-token TOKEN] [--redis URL] [--node NAME]
               [--docroot DIR [--php-cgi PATH] [--php-workers N] [--php-idle-suspend DUR]]
               [--tls-listen ADDR --tls-cert FILE --tls-key FILE] [--h2c-listen ADDR]
  ramjet check --config FILE | --htaccess DIR
  ramjet purge [--admin URL] [--token TOKEN] (--tag T... | --url U... | --prefix P... | --all) [--soft] [--host H]
  ramjet reopen-logs [--config FILE] [--admin URL] [--token TOKEN]
  ramjet wp scan [-c FILE] [--root DIR]...
  ramjet wp enable|disable [-c FILE] [--root DIR]... (--all | SITE...)
  ramjet top [--admin URL] [--token TOKEN] [--interval DUR]
  ramjet adopt (nginx | apache) [--conf FILE] [--out FILE] [--dry-run | --apply] | --rollback
  ramjet version
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "check":
		return check(args[1:], stdout, stderr)
	case "purge":
		return purgeCmd(args[1:], stdout, stderr)
	case "adopt":
		return adoptCmd(args[1:], stdout, stderr)
	case "reopen-logs":
		return reopenLogsCmd(args[1:], stdout, stderr)
	case "wp":
		return wpCmd(args[1:], stdout, stderr)
	case "top":
		return topCmd(args[1:], stdout, stderr)
	case landlock.Subcommand: // how PHP workers are started confined; not for people
		err := landlock.Main(args[1:], os.Environ())
		fmt.Fprintln(stderr, "ramjet:", err)
		return 127
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "ramjet", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "ramjet: unknown command %q\n%s", args[0], usage)
		return 2
	}
}
