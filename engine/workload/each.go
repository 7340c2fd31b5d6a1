package workload

import (
	"fmt"

	"schedplay/engine"
)

// AddSpecEach is AddSpec with after called once after every task the
// workload's builder creates, in the same order and with the same effect
// on the simulation as AddSpec. A caller that must stay responsive (the
// browser page, where nothing preempts a long Go computation) pauses
// there; an error from after stops the build and is returned as is.
func AddSpecEach(sim *engine.Sim, sp Spec, name string, after func() error) (engine.WorkloadID, error) {
	if name == "" {
		name = sp.Kind
	}
	b, err := newBuilder(sp, sim.Topology().NCPU)
	if err != nil {
		return 0, err
	}
	b.Sim = sim
	var stop error // after's error, whatever the kind's builder makes of it
	b.afterSpawn = func() error {
		if err := after(); err != nil {
			stop = err
			return err
		}
		return nil
	}
	b.ID = sim.AddWorkload(name, sp.Kind)
	if err := b.kind.build(b); err != nil {
		if stop != nil {
			return 0, stop
		}
		return 0, fmt.Errorf("workload %q: %v", b.text, err)
	}
	return b.ID, nil
}
