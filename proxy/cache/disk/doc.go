// Package disk is the disk tier under the RAM cache: it keeps a copy of
// every public object the cache stores, one file per primary key, bounded
// in bytes, and loads them back at start so the first requests after a
// restart are hits. It holds more than RAM: a lookup RAM misses reads
// the key's file (Fetch), checked whole, and puts it back in RAM, where
// the store's admission keeps the hot ones; an object RAM evicted before
// the writer got to it is copied still, one a purge took is not.
//
// Copies are written off the request path by one writer goroutine from a
// bounded queue that holds the newest copy of each key once (dropped and
// counted when the disk falls behind) and answers for it until its file
// is indexed (queue.go: a write-behind index); purges
// go to the same writer through a list that never drops, and delete the
// files they cover; a fetch checks the copy it read against the purges
// still on that list. A file is written to a temporary name and renamed, and
// carries its length and a CRC-32C of its contents: a truncated or corrupt
// file is dropped at load, never served. A clean shutdown leaves a marker;
// without it (a crash: purges may not have reached the disk) the caller
// treats what was loaded as a fan-out gap. A write that fails (disk full)
// puts the tier in RAM-only mode for a while, with a log line and a metric.
//
// It stores only what it is given: the caller attaches it to the public
// cache, never to the private one, so per-user entries never reach disk.
// It must not import proxy, purge or conf.
package disk
