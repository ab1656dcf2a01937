//go:build !race

package conns

const raceEnabled = false
