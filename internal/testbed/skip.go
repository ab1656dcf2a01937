package testbed

import (
	"fmt"
	"os"
	"testing"
)

// StrictEnv, when set (.ci/run sets it: CI runs as root with every
// Debian package of .ci/deps), turns Skip into a failure: there a test
// that cannot run is a broken setup, not a machine without root.
const StrictEnv = "RAMJET_TEST_STRICT"

// Skip skips t for a reason of the machine (no root, a tool or a kernel
// feature missing), or fails it under StrictEnv.
func Skip(t testing.TB, why any) {
	t.Helper()
	if os.Getenv(StrictEnv) != "" {
		t.Fatalf("cannot run here (%s is set, so every test must): %v", StrictEnv, why)
	}
	t.Skip(why)
}

// Skipf is Skip with a format.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	Skip(t, fmt.Sprintf(format, args...))
}
