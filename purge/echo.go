package purge

import (
	"crypto/rand"
	"encoding/hex"
)

// procField names the process that published an entry. It is not
// signed (the MAC covers what older nodes verify): a copy with another
// value is still a copy of a signed entry, refused as one, and one
// without it is taken for an echo, as before.
const procField = "proc"

// newProc is a process's id in its entries.
func newProc() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// echo reports whether this process published the entry: the node's
// name alone does not tell, as the old and the new process of an
// upgrade share it and each must apply the other's purges (the old one
// answers its kept connections until it exits; a purge the new one took
// must not leave it serving the purged page). An entry of the node's
// name without a process id comes from a ramjet that wrote none.
func (f *Fanout) echo(values map[string]any) bool {
	if node, _ := values["node"].(string); node != f.cfg.Node {
		return false
	}
	proc, ok := values[procField].(string)
	return !ok || proc == f.proc
}
