package cache

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"
)

// BenchmarkMemoryUnderChurn stores four times the cache size in 30 KB
// pages with the memory limit ramjet sets (MemoryLimit) and
// reports the peak of the Go runtime's mapped-and-not-released memory
// (what RSS follows) relative to the configured size. The target is
// about 1.3.
func BenchmarkMemoryUnderChurn(b *testing.B) {
	const size = 256 << 20
	old := debug.SetMemoryLimit(MemoryLimit(size))
	defer debug.SetMemoryLimit(old)
	for range b.N {
		runtime.GC()
		c, err := New(Config{Size: size})
		if err != nil {
			b.Fatal(err)
		}
		body := make([]byte, 30<<10)
		var peak uint64
		deadline := time.Now().Add(time.Minute)
		for i := 0; i < 4*size/len(body) && time.Now().Before(deadline); i++ {
			key := "http://h/page/" + strconv.Itoa(i)
			e := &Entry{Status: 200, Body: append([]byte(nil), body...), FreshUntil: wallClock() + int64(time.Hour), StaleUntil: wallClock() + int64(time.Hour)}
			c.Insert(c.Hash([]byte(key)), key, VarySpec{}, e)
			if i%256 == 0 {
				peak = max(peak, mappedBytes())
			}
		}
		b.ReportMetric(float64(peak)/size, "peak-rss/size")
		b.ReportMetric(float64(c.Bytes())/size, "held/size")
		c.Close()
	}
}

// mappedBytes is the memory the runtime holds from the OS, less what it
// has returned (released) — the part of RSS the heap accounts for.
func mappedBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}
