package workload

import (
	"reflect"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
)

// A variant era in one file: 6.6 with RUN_TO_PARITY off by default (as a
// distribution might ship it). The knob package learns its name and
// defaults, the engine runs it with 6.6's class; nothing else changes.
var era66NoParity = func() knob.Era {
	e, err := knob.RegisterEra("6.6-no-parity", knob.Era66, map[knob.ID]int64{knob.RUN_TO_PARITY: 0})
	if err == nil {
		err = engine.RegisterEra(e, knob.Era66)
	}
	if err != nil {
		panic(err)
	}
	return e
}()

// The variant at its defaults runs exactly as 6.6 with the feature set by
// hand, and differs from 6.6 at its own defaults: the era is its class
// plus its knob defaults, and no code of the engine tests for it.
func TestVariantEraIsItsBaseWithItsDefaults(t *testing.T) {
	tp := intel(t)
	specs := []string{"schbench:m=2,t=22", "hog:n=150"}
	variant := simulate(t, tp, 3, false, 300*engine.Millisecond, []string{"era=6.6-no-parity"}, specs...)
	byHand := simulate(t, tp, 3, false, 300*engine.Millisecond, []string{"era=6.6", "RUN_TO_PARITY=false"}, specs...)
	base := simulate(t, tp, 3, false, 300*engine.Millisecond, []string{"era=6.6"}, specs...)
	if !reflect.DeepEqual(variant, byHand) {
		t.Errorf("era 6.6-no-parity differs from era 6.6 with RUN_TO_PARITY=false")
	}
	if reflect.DeepEqual(variant, base) {
		t.Errorf("era 6.6-no-parity runs exactly as 6.6: its default did not apply")
	}
	if got := knob.DefaultsFor(era66NoParity); got.On(knob.RUN_TO_PARITY) {
		t.Errorf("the variant's RUN_TO_PARITY default is on")
	}
}
