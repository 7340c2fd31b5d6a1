package workload

import (
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

func intel(t testing.TB) *machine.Topology {
	tp, err := machine.Build(&machine.Spec{
		Name: "intel-test",
		Topology: machine.TopologySpec{Sockets: 2, CoresPerSocket: 22, ThreadsPerCore: 2,
			CoresPerLLC: 22, Numbering: machine.Interleaved},
		SMTThroughput: []float64{1.0, 1.15},
		IdleStates: []machine.IdleState{
			{Name: "C1", ExitLatencyUS: 2, TargetResidencyUS: 2},
			{Name: "C6", ExitLatencyUS: 133, TargetResidencyUS: 400, CoreLevel: true},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestSmokeSchbench(t *testing.T) {
	s, err := engine.New(engine.Config{Machine: intel(t), Knobs: knob.Defaults(), Seed: 1, Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Add(s, "schbench:m=2,t=22", ""); err != nil {
		t.Fatal(err)
	}
	s.RunUntil(2 * engine.Second)
	r := s.Workloads()[0]
	t.Logf("events %d wake %+v", s.Events(), r.WakeupLatency)
	t.Logf("search %+v", s.Search())
	t.Logf("mig %+v bal %+v", s.Migrations(), s.Balance())
	if r.WakeupLatency.Count == 0 || r.WakeupLatency.P50 <= 0 || r.WakeupLatency.P50 > r.WakeupLatency.P99 {
		t.Fatalf("bad latency summary %+v", r.WakeupLatency)
	}
}
