package experiment

import (
	"testing"

	"schedplay/presets"
)

// Every embedded experiment's arms must describe runnable scenarios:
// known machines, valid knob settings, workload specs that parse and fit
// the machine.
func TestEmbeddedExperimentsAreRunnable(t *testing.T) {
	exps := presets.Experiments()
	if len(exps) == 0 {
		t.Fatal("no experiments embedded")
	}
	for _, e := range exps {
		for i, a := range e.Arms {
			cfg := Config(e, i, presets.Size{})
			if _, _, err := cfg.Check(); err != nil {
				t.Errorf("%s arm %s: %v", e.Name, a.Name, err)
			}
		}
	}
}
