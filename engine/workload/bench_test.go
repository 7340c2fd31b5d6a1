package workload

import (
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/internal/benchrun"
)

// benchRun times run on a fresh simulation per iteration, built by setup
// outside the timer (benchrun.Run: its metrics).
func benchRun(b *testing.B, setup func(seed uint64) *engine.Sim, run func(s *engine.Sim)) {
	benchrun.Run(b, func(seed uint64) func() benchrun.Counts {
		s := setup(seed)
		return func() benchrun.Counts {
			run(s)
			t := s.Totals()
			return benchrun.Counts{Events: t.Events, Ticks: t.Ticks, Wakeups: t.Wakeups, SimNS: s.Now()}
		}
	})
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
