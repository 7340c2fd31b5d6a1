// Package benchrun is the engine benchmarks' common loop and metrics
// (make bench): engine/workload's runs and the wake policies' (policy),
// which engine/workload cannot import. It knows nothing of the engine: a
// run reports its counts.
package benchrun

import (
	"runtime"
	"testing"
	"time"
)

// Counts are what one run did.
type Counts struct {
	Events, Ticks, Wakeups int64
	SimNS                  int64 // simulated time at the end
}

// Run times a fresh run per iteration: setup(seed) builds it outside the
// timer and returns the run itself, which reports its counts. It reports
// per wall second the simulated events, wakeups (select_task_rq_fair
// decisions) and simulated seconds — and, where the OS says, events and
// wakeups per CPU second of the process — the events and of them the
// scheduler ticks per wakeup (what the model does per wakeup: wakeups/s =
// events/s ÷ events/wakeup), and the heap allocations per event of the
// run alone (the steady state: 0 is the goal, issue 10).
func Run(b *testing.B, setup func(seed uint64) func() Counts) {
	b.ReportAllocs()
	b.StopTimer()
	WarmUp(func() { setup(0)() })
	b.StartTimer()
	var tot Counts
	var mallocs uint64
	var wall time.Duration
	var cpu float64
	var ms runtime.MemStats
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		run := setup(uint64(i + 1))
		// Collect the previous iteration's simulation and the setup's
		// garbage now, untimed: otherwise the collector's marking (and its
		// write barriers) runs inside the timed run — on the one thread
		// under WebAssembly, 12% of schbench's profile there — though a
		// simulation in steady state allocates nothing.
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		b.StartTimer()
		start, cpu0 := time.Now(), CPUSeconds()
		c := run()
		wall += time.Since(start)
		cpu += CPUSeconds() - cpu0
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - before
		tot.Events += c.Events
		tot.Ticks += c.Ticks
		tot.Wakeups += c.Wakeups
		tot.SimNS += c.SimNS
		b.StartTimer()
	}
	sec := wall.Seconds()
	b.ReportMetric(float64(tot.Events)/sec, "events/s")
	b.ReportMetric(float64(tot.Wakeups)/sec, "wakeups/s")
	b.ReportMetric(float64(tot.SimNS)/1e9/sec, "sim-s/s")
	if cpu > 0 {
		b.ReportMetric(float64(tot.Events)/cpu, "events/cpu-s")
		b.ReportMetric(float64(tot.Wakeups)/cpu, "wakeups/cpu-s")
	}
	b.ReportMetric(float64(tot.Events)/float64(max(tot.Wakeups, 1)), "events/wakeup")
	b.ReportMetric(float64(tot.Ticks)/float64(max(tot.Wakeups, 1)), "ticks/wakeup")
	b.ReportMetric(float64(mallocs)/float64(max(tot.Events, 1)), "allocs/event")
}

// warmedUp is set once the process has run WarmUp's loop.
var warmedUp bool

// WarmUp runs f, untimed, for two seconds of wall time once per process
// under WebAssembly. V8 first runs each function as baseline code and
// compiles the hot ones again on background threads; until that is done
// an iteration runs up to 30× slower (a 2-sim-s schbench run took 1 s
// instead of 35 ms under Node), and a short benchmark whose first
// iteration fills -benchtime would report that. Native code needs no
// warm-up.
func WarmUp(f func()) {
	if runtime.GOOS != "js" || warmedUp {
		return
	}
	warmedUp = true
	for start := time.Now(); time.Since(start) < 2*time.Second; {
		f()
	}
}
