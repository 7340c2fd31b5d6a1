package workload

import (
	"errors"
	"testing"

	"schedplay/engine/knob"
)

// AddSpecEach reports every task a builder creates, and an error from the
// callback stops the build and comes back as is.
func TestAddSpecEach(t *testing.T) {
	tp := intel(t)
	for _, spec := range []string{"netperf:n=5", "schbench:m=2,t=3", "hog:n=7", "noise"} {
		sim := buildSim(t, tp, knob.Defaults(), 1, false)
		sp, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		if _, err := AddSpecEach(sim, sp, "", func() error { calls++; return nil }); err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if calls == 0 || calls != sim.NumTasks() {
			t.Errorf("%s: %d calls for %d tasks", spec, calls, sim.NumTasks())
		}

		stop := errors.New("stop here")
		sim = buildSim(t, tp, knob.Defaults(), 1, false)
		calls = 0
		_, err = AddSpecEach(sim, sp, "", func() error {
			calls++
			if calls == 2 {
				return stop
			}
			return nil
		})
		if err != stop || sim.NumTasks() != 2 {
			t.Errorf("%s: stopped with %v after %d tasks, want the callback's error after 2", spec, err, sim.NumTasks())
		}
	}
}
