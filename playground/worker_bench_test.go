package playground

import (
	"runtime"
	"testing"
	"time"

	"schedplay/internal/json"
)

// BenchmarkWorkerLoop is the page's engine worker without the page: the
// link built as the worker builds it, then run as fast as possible in the
// worker's slices (25 ms, wasm/worker.go's runSlice) with a snapshot
// filled and encoded every 250 ms of running — the rate the page asks for
// at max speed on a software renderer — and the decision panel's JSON
// with it, as the worker posts them.
// Under Node (make bench-wasm, or GOOS=js GOARCH=wasm go test -bench
// WorkerLoop ./playground) it is the "engine in Node" of issue 10's page /
// Node row: the page's workers run this loop plus postMessage. One op is
// one slice; events/s is over the whole run.
func BenchmarkWorkerLoop(b *testing.B) {
	for _, c := range []struct{ name, link string }{
		{"intel-default", "#speed=max"},
		{"zen4-1024-pairs", "#preset=amd-zen4-2s-256c-512t&w=netperf:n=1024&speed=max"},
	} {
		b.Run(c.name, func(b *testing.B) {
			st, err := Parse(c.link)
			if err != nil {
				b.Fatal(err)
			}
			a, err := BuildArm(st, 0, nil, func(time.Duration, bool) {}, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			r := NewRunner(a, 1, st.Speed, false)
			var snap Snapshot
			var buf []byte
			const slice, snapEvery = 25 * time.Millisecond, 250 * time.Millisecond
			if runtime.GOOS == "js" {
				// V8 compiles the hot functions again in the background
				// for their first seconds (engine/workload's warmUp).
				for t0 := time.Now(); time.Since(t0) < 2*time.Second; {
					r.Run(slice)
				}
			}
			e0, s0 := a.Sim.Totals().Events, a.Sim.Now()
			var sinceSnap time.Duration
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if !r.Run(slice) {
					b.Fatal("the run stopped")
				}
				if sinceSnap += time.Since(t0); sinceSnap >= snapEvery {
					sinceSnap = 0
					r.Snapshot(&snap, true, -1)
					buf = snap.Encode(buf[:0])
					if r.Log.Changed() {
						if _, err := json.Marshal(r.Log.Last(LogSize)); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			sec := time.Since(start).Seconds()
			b.ReportMetric(float64(a.Sim.Totals().Events-e0)/sec, "events/s")
			b.ReportMetric(float64(a.Sim.Now()-s0)/1e9/sec, "sim-s/s")
		})
	}
}
