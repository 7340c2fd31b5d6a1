package traceimport

import (
	"bytes"
	"fmt"
	"testing"

	"schedplay/engine"
	"schedplay/trace"
)

// BenchmarkImport imports the simulator's own traces of one hackbench
// run (its ftrace text and its Chrome JSON) at three lengths, each 4×
// the one before: MB/s that stays level across the lengths is linear
// time (issue 22: the Chrome JSON's fell as its length grew, 4 MB taking
// 2.1 s and 8 MB 8.4 s). Run by `make bench-import` (README,
// BENCHMARKS.md "Issue 22: import streams"); not part of `make bench`,
// whose table is the engine's events/s.
func BenchmarkImport(b *testing.B) {
	for _, ms := range []int64{10, 40, 160} {
		for _, f := range []trace.Format{trace.FormatFtrace, trace.FormatJSON} {
			data := simTrace(b, "intel-2s-44c-88t", ms*engine.Millisecond, f, "hackbench:g=2,l=100000")
			name := map[trace.Format]string{trace.FormatFtrace: "ftrace", trace.FormatJSON: "chrome"}[f]
			b.Run(fmt.Sprintf("%s/%dms/%.1fMB", name, ms, float64(len(data))/1e6), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				cpu0 := cpuSeconds()
				for b.Loop() {
					if _, _, err := ImportReader(bytes.NewReader(data), Options{}); err != nil {
						b.Fatal(err)
					}
				}
				// MB per CPU second: the wall clock's MB/s counts the
				// waits for a core on a shared machine.
				if cpu := cpuSeconds() - cpu0; cpu0 >= 0 && cpu > 0 {
					b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu, "MB/cpu-s")
				}
			})
		}
	}
}
