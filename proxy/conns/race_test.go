//go:build race

package conns

// raceEnabled: the race detector allocates on its own; allocation tests skip.
const raceEnabled = true
