package phppool

import (
	"slices"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// BenchmarkResume measures a request's latency on a worker that was just
// suspended (SIGSTOP, so the request pays SIGCONT and rescheduling)
// against one that stayed idle, and the pool's own resume histogram
// (SIGCONT to the first response record). Run:
//
//	go test -run=NONE -bench=Resume -benchtime=500x ./phppool/
func BenchmarkResume(b *testing.B) {
	if testing.Short() {
		b.Skip("runs php-cgi")
	}
	for _, suspend := range []bool{false, true} {
		name := "idle"
		if suspend {
			name = "suspended"
		}
		b.Run(name, func(b *testing.B) {
			// IdleSuspend enables suspension; the supervisor never reaches an
			// hour, so only the benchmark suspends, right before each request.
			p := startPool(b, Config{Min: 1, Max: 1, MaxRequests: 1 << 30, IdleSuspend: time.Hour}, nil)
			params := scriptParams(testdataScript(b, "hello.php"), "GET", "")
			if err := poolDo(p, params); err != nil { // warm up: opcache, page cache
				b.Fatal(err)
			}
			samples := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			pid := p.Status()[0].PID
			for b.Loop() {
				// Both cases start from a worker that finished its previous
				// request's cleanup and sleeps ('S') or is stopped ('T'):
				// SIGSTOP takes effect asynchronously.
				b.StopTimer()
				want := "S"
				if suspend {
					p.suspendIdle(time.Now().Add(2 * time.Hour))
					want = "T"
				}
				waitProcState(b, pid, want)
				b.StartTimer()
				start := time.Now()
				if err := poolDo(p, params); err != nil {
					b.Fatal(err)
				}
				samples = append(samples, time.Since(start))
			}
			b.StopTimer()
			reportQuantiles(b, samples)
			if suspend {
				h := p.Stats().ResumeLatency
				b.ReportMetric(float64(h.Quantile(0.5).Microseconds()), "resume-p50-bucket-µs")
				b.ReportMetric(float64(h.Quantile(0.99).Microseconds()), "resume-p99-bucket-µs")
			}
		})
	}
}

// waitProcState polls /proc until pid is in state, for at most a second.
func waitProcState(b *testing.B, pid int, state string) {
	for start := time.Now(); time.Since(start) < time.Second; {
		if testbed.ProcState(pid) == state {
			return
		}
	}
	b.Fatalf("worker %d not in state %q within 1s (now %q)", pid, state, testbed.ProcState(pid))
}

// reportQuantiles reports the p50 and p99 of samples in microseconds.
func reportQuantiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(q float64) float64 {
		return float64(samples[int(q*float64(len(samples)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.5), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
