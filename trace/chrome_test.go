package trace

import (
	"bytes"
	"testing"

	json "github.com/goccy/go-json"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
	"schedplay/engine/workload"
)

func TestTraceIsValidChromeJSONWithSlicesDecisionsAndFlows(t *testing.T) {
	tp, err := machine.Build(&machine.Spec{Name: "t", Topology: machine.TopologySpec{Sockets: 1, CoresPerSocket: 4, ThreadsPerCore: 2, CoresPerLLC: 4, Numbering: "interleaved"},
		SMTThroughput: []float64{1, 1.2}, IdleStates: []machine.IdleState{{Name: "C1", ExitLatencyUS: 1, TargetResidencyUS: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	sim, _ := engine.New(engine.Config{Machine: tp, Knobs: knob.Defaults(), Seed: 1})
	if _, err := workload.Add(sim, "schbench:m=1,t=4,c=2000,s=1000", ""); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tr := Attach(sim, &buf)
	sim.RunUntil(50 * engine.Millisecond)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte(`{"traceEvents":[`)) {
		t.Fatalf("trace does not start with traceEvents: %.40s", buf.String())
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	ph := map[string]int{}
	lastEnd := map[float64]float64{}
	for _, e := range doc.TraceEvents {
		p := e["ph"].(string)
		ph[p]++
		if p == "X" {
			tid := e["tid"].(float64)
			ts, dur := e["ts"].(float64), e["dur"].(float64)
			if ts < lastEnd[tid]-1e-9 {
				t.Fatalf("overlapping slices on track %v", tid)
			}
			lastEnd[tid] = ts + dur
		}
	}
	for _, p := range []string{"M", "X", "i", "s", "f"} {
		if ph[p] == 0 {
			t.Errorf("no %q events (have %v)", p, ph)
		}
	}
}
