package accesslog

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLine is what a hit's line costs its request: formatting into a
// reused buffer and handing it to the writer.
func BenchmarkLine(b *testing.B) {
	w, err := Open(filepath.Join(b.TempDir(), "access.log"), Config{})
	if err != nil {
		b.Fatal(err)
	}
	w.Start()
	defer w.Close()
	for _, f := range []Format{Combined, Ramjet, JSON} {
		b.Run(f.String(), func(b *testing.B) {
			rec := hitRecord()
			rec.Time = time.Now()
			buf := make([]byte, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				buf = f.Append(buf[:0], &rec)
				w.Log(buf)
			}
		})
	}
}
