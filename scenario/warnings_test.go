package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"schedplay/engine"
)

// A run of 20 ms ends before schbench's first 30 ms spin completes:
// schbench records no wakeup, and says so. (Beside a finite hackbench it
// no longer starves: the run goes on to --duration; see
// TestFiniteWorkloadEndsTheRunOnlyBesideBackground.)
func TestWarningNoWakeupSamples(t *testing.T) {
	c := Config{Preset: "intel-2s-44c-88t", Workloads: []string{"schbench:m=2,t=16"}, Seed: 1, Duration: 20 * engine.Millisecond}
	r, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Workloads[0].WakeupLatencyUS.Count != 0 {
		t.Fatalf("schbench recorded %d samples: pick a scenario that still starves it", r.Workloads[0].WakeupLatencyUS.Count)
	}
	if len(r.Warnings) != 1 {
		t.Fatalf("warnings %q, want one for schbench", r.Warnings)
	}
	for _, want := range []string{"workload schbench recorded no wakeup latency samples", "in the 0.02 s simulated", "wakeup_latency_us"} {
		if !strings.Contains(r.Warnings[0], want) {
			t.Errorf("warning %q lacks %q", r.Warnings[0], want)
		}
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"warnings":["workload schbench`) {
		t.Errorf("JSON lacks the warnings array")
	}
	agg, err := Aggregate([]*Result{r, r})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(agg), `"warnings": ["seed 1: workload schbench`) {
		t.Errorf("aggregate lacks the warnings:\n%s", agg)
	}
}

// A workload that recorded samples, and one that measures none (a hog),
// give no warning, and the JSON has no warnings key.
func TestNoWarningWithSamples(t *testing.T) {
	c := Config{Preset: "p4-ht-1c-2t", Workloads: []string{"schbench:m=1,t=2", "hog:n=1"}, Seed: 1, Duration: 200 * engine.Millisecond}
	r, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings %q", r.Warnings)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "warnings") {
		t.Errorf("JSON has a warnings key without warnings")
	}
	agg, _ := Aggregate([]*Result{r, r})
	if strings.Contains(string(agg), "warnings") {
		t.Errorf("aggregate has a warnings key without warnings")
	}
}

// A request-latency workload that completes no request in the run warns
// of its request latency.
func TestWarningNoRequestSamples(t *testing.T) {
	c := Config{Preset: "p4-ht-1c-2t", Workloads: []string{"netperf:think=1000000"}, Seed: 1, Duration: 10 * engine.Millisecond}
	r, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Workloads[0].RequestLatencyUS != nil {
		t.Fatalf("netperf recorded requests (%+v): pick a longer think time", r.Workloads[0].RequestLatencyUS)
	}
	found := false
	for _, w := range r.Warnings {
		found = found || strings.Contains(w, "workload netperf recorded no request latency samples (in the 0.01 s simulated)")
	}
	if !found {
		t.Errorf("warnings %q lack netperf's request latency", r.Warnings)
	}
}
