//go:build !race

package accesslog

import (
	"path/filepath"
	"testing"
	"time"
)

// TestLineCostsNoAllocation: formatting into a reused buffer and handing
// the line over allocate nothing, in every format.
func TestLineCostsNoAllocation(t *testing.T) {
	w, err := Open(filepath.Join(t.TempDir(), "access.log"), Config{Delay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	defer w.Close()
	buf := make([]byte, 0, 1024)
	for _, f := range []Format{Combined, Ramjet, JSON} {
		t.Run(f.String(), func(t *testing.T) {
			rec := hitRecord()
			rec.Time = time.Now()
			n := testing.AllocsPerRun(1000, func() {
				buf = f.Append(buf[:0], &rec)
				w.Log(buf)
			})
			if n != 0 {
				t.Fatalf("a %s line allocates %v times, want 0", f, n)
			}
		})
	}
}
