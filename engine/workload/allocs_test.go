package workload

import (
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
)

// Once a simulation has reached its steady state (its slices grown to
// their working size), processing events allocates nothing: schbench on the
// 88-CPU Intel box (ticks, the NOHZ idle balance, wakeups with their idle
// search) and netperf ping-pong on the 512-CPU Zen 4 (message passing).
func TestSteadyStateStepsDoNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs seconds of simulation")
	}
	cases := []struct {
		name   string
		setup  func() *engine.Sim
		warmNS int64
		steps  int
	}{
		{"schbench/intel", func() *engine.Sim {
			s, err := engine.New(engine.Config{Machine: intel(t), Knobs: knob.Defaults(), Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Add(s, "schbench:m=2,t=22", ""); err != nil {
				t.Fatal(err)
			}
			return s
		}, 2 * engine.Second, 200000},
		{"netperf/zen4", func() *engine.Sim {
			s := newPresetSim(t, "amd-zen4-2s-256c-512t", 3)
			if _, err := Add(s, "netperf:n=256", ""); err != nil {
				t.Fatal(err)
			}
			return s
		}, 5 * engine.Millisecond, 300000},
	}
	for _, c := range cases {
		s := c.setup()
		s.RunUntil(c.warmNS)
		stepped := 0
		allocs := testing.AllocsPerRun(3, func() {
			for i := 0; i < c.steps && s.Step(); i++ {
				stepped++
			}
		})
		if stepped < 4*c.steps {
			t.Fatalf("%s: only %d events after warm-up", c.name, stepped)
		}
		if allocs != 0 {
			t.Errorf("%s: %v allocations per %d steady-state events, want 0", c.name, allocs, c.steps)
		}
	}
}
