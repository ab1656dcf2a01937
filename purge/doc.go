// Package purge owns invalidation requests from every source: the
// LSCache purge header grammar, the admin purge API and its client, and
// the Redis Streams fan-out that carries each purge to every node.
//
// It describes what to purge (Command) and hands it to an Invalidator;
// the cache behind that interface decides how. It must not import proxy
// or conf.
package purge
