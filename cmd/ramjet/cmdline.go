package main

import "errors"

// errUsage is a command line a command cannot run with, already
// explained on stderr: the command exits 2.
var errUsage = errors.New("usage")
