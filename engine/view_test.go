package engine

import (
	"testing"

	"schedplay/engine/cpumask"
)

// Work conservation: two hogs pinned to CPU 0 of a 2-CPU machine leave
// CPU 1 idle while a task waits on CPU 0, all the time; two hogs on two
// CPUs never do.
func TestConservationMeter(t *testing.T) {
	run := func(pin [2]int) Totals {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1)
		s.debug = true
		w := s.AddWorkload("h", "hog")
		for i, c := range pin {
			if _, err := s.Spawn(w, TaskSpec{Name: "hog", Allowed: cpumask.Of(2, c), ParentCPU: c, Program: hog()}); err != nil {
				t.Fatal(err, i)
			}
		}
		s.RunUntil(Second)
		return s.Totals()
	}
	stacked := run([2]int{0, 0})
	if stacked.ConservationNS < 990*Millisecond || stacked.LLCConservationNS < 990*Millisecond {
		t.Fatalf("stacked hogs: conservation %d / %d ns of 1 s", stacked.ConservationNS, stacked.LLCConservationNS)
	}
	spread := run([2]int{0, 1})
	if spread.ConservationNS > 10*Microsecond {
		t.Fatalf("spread hogs: conservation %d ns", spread.ConservationNS)
	}
}

// The views allocate nothing once their storage exists.
func TestViewsDoNotAllocate(t *testing.T) {
	s := newSim(t, smallSpec(1, 4, 2, 4, "interleaved"), 1)
	w := s.AddWorkload("h", "hog")
	s.Spawn(w, TaskSpec{Name: "hog", Program: hog()})
	s.RunUntil(10 * Millisecond)
	views := s.CPUViews(nil)
	probes := make([]int, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		views = s.CPUViews(views)
		_ = s.Totals()
		_, probes, _ = s.LastDecisionOn(0, probes)
		s.DecisionsSince(0, func(*Decision) {})
	})
	if allocs != 0 {
		t.Fatalf("views allocate %.1f times per call", allocs)
	}
}
