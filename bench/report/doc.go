// Command report turns the records of one bench/run (a JSON Lines file, one
// measured row, run description, group setting or contender config per line)
// into RESULTS.md's tables and the gnuplot charts: medians and min–max over
// the rounds, ratios against ramjet, and the "where ramjet loses" columns.
// It reads only the records file, never Markdown, and imports nothing of
// ramjet's hot path.
//
// Usage:
//
//	go run ./bench/report -records RUN.jsonl [-out RESULTS.md] [-charts DIR]
//
// -out replaces the text between the bench/run markers of that file (keeping
// notes outside them); -charts renders PNGs with gnuplot into DIR.
package main
