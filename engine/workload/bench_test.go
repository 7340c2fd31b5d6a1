package workload

import (
	"runtime"
	"testing"
	"time"

	"schedplay/engine"
	"schedplay/engine/knob"
)

// benchRun times run on a fresh simulation per iteration, built by setup
// outside the timer, and reports per wall second the simulated events,
// wakeups (select_task_rq_fair decisions) and simulated seconds — and, where
// the OS says, events and wakeups per CPU second of the process — the
// events and of them the scheduler ticks per wakeup (what the model does
// per wakeup: wakeups/s = events/s ÷ events/wakeup), and the heap
// allocations per event of the run alone (the steady state: 0 is the goal,
// issue 10).
func benchRun(b *testing.B, setup func(seed uint64) *engine.Sim, run func(s *engine.Sim)) {
	b.ReportAllocs()
	b.StopTimer()
	warmUp(func() { run(setup(0)) })
	b.StartTimer()
	var events, ticks, wakeups, simNS int64
	var mallocs uint64
	var wall time.Duration
	var cpu float64
	var ms runtime.MemStats
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := setup(uint64(i + 1))
		// Collect the previous iteration's simulation and the setup's
		// garbage now, untimed: otherwise the collector's marking (and its
		// write barriers) runs inside the timed run — on the one thread
		// under WebAssembly, 12% of schbench's profile there — though a
		// simulation in steady state allocates nothing.
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		b.StartTimer()
		start, cpu0 := time.Now(), cpuSeconds()
		run(s)
		wall += time.Since(start)
		cpu += cpuSeconds() - cpu0
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - before
		tot := s.Totals()
		events += tot.Events
		ticks += tot.Ticks
		wakeups += tot.Wakeups
		simNS += s.Now()
		b.StartTimer()
	}
	sec := wall.Seconds()
	b.ReportMetric(float64(events)/sec, "events/s")
	b.ReportMetric(float64(wakeups)/sec, "wakeups/s")
	b.ReportMetric(float64(simNS)/1e9/sec, "sim-s/s")
	if cpu > 0 {
		b.ReportMetric(float64(events)/cpu, "events/cpu-s")
		b.ReportMetric(float64(wakeups)/cpu, "wakeups/cpu-s")
	}
	b.ReportMetric(float64(events)/float64(max(wakeups, 1)), "events/wakeup")
	b.ReportMetric(float64(ticks)/float64(max(wakeups, 1)), "ticks/wakeup")
	b.ReportMetric(float64(mallocs)/float64(max(events, 1)), "allocs/event")
}

// warmedUp is set once the process has run warmUp's loop.
var warmedUp bool

// warmUp runs f, untimed, for two seconds of wall time once per process
// under WebAssembly. V8 first runs each function as baseline code and
// compiles the hot ones again on background threads; until that is done
// an iteration runs up to 30× slower (a 2-sim-s schbench run took 1 s
// instead of 35 ms under Node), and a short benchmark whose first
// iteration fills -benchtime would report that. Native code needs no
// warm-up.
func warmUp(f func()) {
	if runtime.GOOS != "js" || warmedUp {
		return
	}
	warmedUp = true
	for start := time.Now(); time.Since(start) < 2*time.Second; {
		f()
	}
}

// BenchmarkSchbenchIntel runs schbench m=2,t=22 on the 88-CPU Intel box for
// 2 simulated seconds per iteration.
func BenchmarkSchbenchIntel(b *testing.B) {
	tp := intel(b)
	benchRun(b, func(seed uint64) *engine.Sim {
		s, err := engine.New(engine.Config{Machine: tp, Knobs: knob.Defaults(), Seed: seed})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Add(s, "schbench:m=2,t=22", ""); err != nil {
			b.Fatal(err)
		}
		return s
	}, func(s *engine.Sim) { s.RunUntil(2 * engine.Second) })
}
