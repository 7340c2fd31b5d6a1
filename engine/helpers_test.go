package engine

import (
	"testing"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// intelSpec is the sis-scalability-2019 test box in Go form, for engine
// tests that must not depend on the presets package.
func intelSpec() *machine.Spec {
	return &machine.Spec{
		Name: "intel-test",
		Topology: machine.TopologySpec{Sockets: 2, CoresPerSocket: 22, ThreadsPerCore: 2,
			CoresPerLLC: 22, Numbering: machine.Interleaved},
		SMTThroughput: []float64{1.0, 1.15},
		IdleStates: []machine.IdleState{
			{Name: "C1", ExitLatencyUS: 2, TargetResidencyUS: 2},
			{Name: "C1E", ExitLatencyUS: 10, TargetResidencyUS: 20},
			{Name: "C3", ExitLatencyUS: 40, TargetResidencyUS: 100, CoreLevel: true},
			{Name: "C6", ExitLatencyUS: 133, TargetResidencyUS: 400, CoreLevel: true},
		},
	}
}

func smallSpec(sockets, cores, threads, coresPerLLC int, numbering string) *machine.Spec {
	tp := make([]float64, threads)
	for i := range tp {
		tp[i] = 1.0 + 0.15*float64(i)
	}
	return &machine.Spec{
		Name: "small",
		Topology: machine.TopologySpec{Sockets: sockets, CoresPerSocket: cores, ThreadsPerCore: threads,
			CoresPerLLC: coresPerLLC, Numbering: numbering},
		SMTThroughput: tp,
		IdleStates:    []machine.IdleState{{Name: "C1", ExitLatencyUS: 1, TargetResidencyUS: 1}},
	}
}

func newSim(t testing.TB, spec *machine.Spec, seed uint64, sets ...string) *Sim {
	t.Helper()
	tp, err := machine.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	k := knob.Defaults()
	for i := 0; i+1 < len(sets); i += 2 {
		if err := k.Set(sets[i], sets[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Config{Machine: tp, Knobs: k, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cpumaskOf is a mask of the given CPUs of s's machine.
func cpumaskOf(s *Sim, cpus ...int) cpumask.Mask { return cpumask.Of(s.topo.NCPU, cpus...) }
