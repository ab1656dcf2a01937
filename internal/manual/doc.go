// Package manual is what ramjet's documentation is built and checked
// with: the Markdown its pages are written in (fenced blocks, links,
// heading anchors as GitHub makes them), the man pages' roff rendered
// from Markdown sources under docs/man, and the configuration key
// reference generated from conf/ramjet.example.yaml, the file that
// documents every key with its default.
//
// Generate writes every generated file from the repository's sources;
// cmd/manpage runs it (go generate ./internal/manual), and the package's
// tests fail when a committed file differs from what Generate makes.
package manual

//go:generate go run ../../cmd/manpage -repo ../..
