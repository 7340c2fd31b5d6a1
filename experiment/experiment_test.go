package experiment

import (
	"reflect"
	"testing"

	json "github.com/goccy/go-json"

	"schedplay/presets"
	"schedplay/scenario"
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

// Evaluate on results that travelled as JSON (as the page's workers send
// them) gives Run's verdicts, and on a partial run leaves the checks of
// the missing arms pending.
func TestEvaluateFromJSONAndPartialRuns(t *testing.T) {
	e, err := presets.ExperimentByName("v6-pipe-pingpong")
	if err != nil {
		t.Fatal(err)
	}
	size := e.Quick
	size.DurationS = 0.2
	want, err := Run(e, size, nil)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string][]*scenario.Result{}
	for i, a := range e.Arms {
		res, err := scenario.RunMany(Config(e, i, size), want.Seeds)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var back scenario.Result
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			results[a.Name] = append(results[a.Name], &back)
		}
	}
	got := Evaluate(e, size, results)
	if !reflect.DeepEqual(got.Checks, want.Checks) || !reflect.DeepEqual(got.Rows, want.Rows) {
		t.Fatalf("from JSON:\n%+v\n%+v\nRun:\n%+v\n%+v", got.Checks, got.Rows, want.Checks, want.Rows)
	}
	delete(results, e.Arms[1].Name)
	part := Evaluate(e, size, results)
	pending := 0
	for _, c := range part.Checks {
		if c.Pending {
			pending++
		}
	}
	if pending == 0 || part.Pass {
		t.Fatalf("partial run: %+v", part.Checks)
	}
}
