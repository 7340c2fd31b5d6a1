package experiment

import (
	"strings"
	"testing"

	"schedplay/presets"
)

// tinyExperiment is one short hog arm with two checks that cannot hold
// (a CPU cannot be more than 100% busy).
const tinyExperiment = `{
  "name": "tiny", "kind": "experiment", "target": "T", "title": "t", "source": "test",
  "machine": "intel-2s-44c-88t", "workloads": ["hog:n=1"], "duration_s": 0.01, "seeds": 1,
  "quick": {"known_fail": %s},
  "arms": [{"name": "A", "label": "a"}],
  "rows": [{"label": "busy", "sim": "A:cpu_busy_pct"}],
  "checks": [
    {"rule": "first", "kind": "range", "a": "A:cpu_busy_pct", "min": 1000},
    {"rule": "second", "kind": "range", "a": "A:cpu_busy_pct", "min": 1000}
  ]
}`

// A check the quick size is known not to reproduce does not fail the
// quick run, is flagged with its diagnosis, and every other check still
// fails it; the full size ignores the list.
func TestQuickKnownFailIsPerCheck(t *testing.T) {
	parse := func(known string) *presets.Experiment {
		t.Helper()
		e, err := presets.ParseExperiment([]byte(strings.Replace(tinyExperiment, "%s", known, 1)), "tiny.json")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	run := func(e *presets.Experiment, size presets.Size) *Outcome {
		t.Helper()
		o, err := Run(e, size, nil)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	both := parse(`{"first": "why 1", "second": "why 2"}`)
	if o := run(both, both.Quick); !o.Pass || o.Checks[0].KnownAtSize != "why 1" || o.Checks[1].KnownAtSize != "why 2" {
		t.Errorf("both checks known at the quick size: pass %v, checks %+v", o.Pass, o.Checks)
	}
	if o := run(both, presets.Size{}); o.Pass || o.Checks[0].KnownAtSize != "" {
		t.Errorf("full size must not excuse a check: pass %v, checks %+v", o.Pass, o.Checks)
	}
	one := parse(`{"first": "why 1"}`)
	if o := run(one, one.Quick); o.Pass || o.Checks[1].KnownAtSize != "" {
		t.Errorf("only the first check is known: pass %v, checks %+v", o.Pass, o.Checks)
	}
	if _, err := presets.ParseExperiment([]byte(strings.Replace(tinyExperiment, "%s", `{"frist": "typo"}`, 1)), "tiny.json"); err == nil || !strings.Contains(err.Error(), "quick.known_fail") || !strings.Contains(err.Error(), `"first"`) {
		t.Errorf("a known_fail naming no check: %v", err)
	}
}
