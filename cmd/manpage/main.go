// Command manpage writes ramjet's generated documentation: the man pages
// ramjet(8) and ramjet.yaml(5) from their Markdown sources in docs/man,
// and the key reference of docs/configuration.md from
// conf/ramjet.example.yaml (see package manual). Run it as
// go generate ./internal/manual, after editing any of those.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/ramjet-proxy/ramjet/internal/manual"
)

func main() {
	repo := flag.String("repo", ".", "the repository's top directory")
	flag.Parse()
	files, err := manual.Generate(*repo)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.WriteFile(filepath.Join(*repo, p), []byte(files[p]), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "manpage:", err)
			os.Exit(1)
		}
		fmt.Println(p)
	}
}
