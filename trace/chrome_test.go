package trace

import (
	"bytes"
	stdjson "encoding/json"
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
	if bytes.Contains(buf.Bytes(), []byte("truncated")) {
		t.Errorf("a complete trace says it is truncated")
	}
}

// Task names are data: control characters, quotes, backslashes and invalid
// UTF-8 must give valid JSON (the writer used %q, which is Go's escaping,
// not JSON's: \x01, \a and \xff are not JSON escapes). An interrupted
// trace is complete and says so.
func TestHostileTaskNamesAndInterruptedTraceAreValidJSON(t *testing.T) {
	tp, err := machine.Build(&machine.Spec{Name: "t", Topology: machine.TopologySpec{Sockets: 1, CoresPerSocket: 2, ThreadsPerCore: 1, CoresPerLLC: 2, Numbering: "interleaved"},
		SMTThroughput: []float64{1}, IdleStates: []machine.IdleState{{Name: "C1", ExitLatencyUS: 1, TargetResidencyUS: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	sim, _ := engine.New(engine.Config{Machine: tp, Knobs: knob.Defaults(), Seed: 1})
	app := "{\"tasks\": {\"ctl\\u0001\\u001f\\u0007\": {\"loop\": 5, \"run\": 100, \"sleep\": 50}, " +
		"\"q\\\"b\\\\s\": {\"loop\": 5, \"run\": 100, \"sleep\": 50}, \"bad\xff\xfe\": {\"loop\": 5, \"run\": 100, \"sleep\": 50}}}"
	if _, err := workload.Add(sim, workload.RTAppSpec([]byte(app)), ""); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tr := Attach(sim, &buf)
	sim.RunUntil(2 * engine.Millisecond)
	if err := tr.CloseInterrupted(); err != nil {
		t.Fatal(err)
	}
	if !stdjson.Valid(buf.Bytes()) {
		t.Fatalf("invalid JSON:\n%s", buf.String())
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string `json:"ph"`
			Name string `json:"name"`
		} `json:"traceEvents"`
		Metadata map[string]any `json:"metadata"`
	}
	if err := stdjson.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			names[e.Name] = true
		}
	}
	for _, want := range []string{"ctl\x01\x1f\x07", `q"b\s`, "bad\ufffd\ufffd"} {
		if !names[want] {
			t.Errorf("no slice named %q; have %v", want, names)
		}
	}
	if doc.Metadata["truncated"] != true || doc.Metadata["interrupted_at_s"] != 0.002 {
		t.Errorf("metadata %v", doc.Metadata)
	}
}
