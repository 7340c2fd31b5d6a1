package engine

import (
	"testing"

	"schedplay/engine/cpuidle"
)

// Each era's CPUs run their own kernel's menu governor: with the tick
// already stopped, a timer 300 µs away and eight 5 µs idle periods
// behind it, v5.2's and 6.1's menu pick C1 (C6 would not pay off before
// the timer), 6.6's does not look at the timer below
// RESIDENCY_THRESHOLD_NS and picks C6 (engine/cpuidle/menu6x.go).
func TestEraMenuGovernor(t *testing.T) {
	for era, want := range map[string]string{"5.2": "C1", "6.1": "C1", "6.6": "C6"} {
		s := newSim(t, withStates(smallSpec(1, 4, 1, 4, "interleaved")), 1, "era", era)
		g := s.cpus[0].gov
		for i := 0; i < 8; i++ {
			g.Select(s.idleStates, cpuidle.Input{SleepLengthNS: 4 * Second, DeltaNextNS: Millisecond,
				LatencyReqUS: cpuidle.NoLatencyLimit, TickUS: 1000})
			g.Reflect(1, cpuidle.Outcome{ResidencyNS: 6 * Microsecond})
		}
		idx, _ := g.Select(s.idleStates, cpuidle.Input{SleepLengthNS: 300 * Microsecond, DeltaNextNS: 300 * Microsecond,
			TickStopped: true, LatencyReqUS: cpuidle.NoLatencyLimit, TickUS: 1000})
		if got := s.idleStates[idx].Name; got != want {
			t.Errorf("era %s: chose %s, want %s", era, got, want)
		}
	}
}
