// Package cache owns the in-RAM page store: immutable entries grouped by
// primary key (all Vary variants of one URL in one Object), per-entry
// expiry, and byte-bounded W-TinyLFU eviction on top of otter.
//
// Lookups are keyed by a 64-bit hash of the primary key computed by the
// caller into its own buffer, and confirmed by comparing the full key, so
// a hit allocates nothing. Objects and entries are never mutated after
// they are stored, but for the atomic use counts of an object's variants,
// which decide the variants a full object keeps (admission.go): an insert
// builds a new Object (copy on write).
//
// It does no network or disk I/O and must not import proxy, purge or conf.
package cache
