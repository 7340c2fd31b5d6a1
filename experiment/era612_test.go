package experiment

import (
	"math"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/presets"
	"schedplay/scenario"
)

// The 6.6 → 6.12 experiment at its quick size: the 6.12 arm delays sleeps
// and requeues delayed wakees, NO_DELAY_DEQUEUE does neither; and its
// checks can fail: the same checks on results where NO_DELAY_DEQUEUE
// requeued, where 6.12 requeued nothing, or where the 6.12 arm ran an era
// without delayed dequeue, fail with the reason.
func TestEra612ExperimentChecksCanFail(t *testing.T) {
	e, err := presets.ExperimentByName("era-6.6-vs-6.12")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Arms) != 3 || e.Arms[0].Name != "6.6" || e.Arms[1].Name != "6.12" || e.Arms[2].Name != "6.12-NO_DELAY_DEQUEUE" {
		t.Fatalf("arms %+v", e.Arms)
	}
	results := map[string][]*scenario.Result{}
	for i, a := range e.Arms {
		res, err := scenario.RunMany(Config(e, i, e.Quick), 1)
		if err != nil {
			t.Fatal(err)
		}
		results[a.Name] = res
	}
	o := Evaluate(e, e.Quick, results)
	if !o.Pass {
		t.Fatalf("quick size fails: %+v", o.Checks)
	}
	on, off := results["6.12"][0], results["6.12-NO_DELAY_DEQUEUE"][0]
	if results["6.6"][0].Delayed != nil || on.Delayed == nil || off.Delayed == nil {
		t.Fatalf("delayed_dequeue: 6.6 %+v, 6.12 %+v, off %+v", results["6.6"][0].Delayed, on.Delayed, off.Delayed)
	}
	// The share of wakeups that were requeues is the stage count over
	// all wakeups.
	pct, _, err := o.Metric("6.12:delayed_requeue_pct")
	want := 100 * float64(on.Search.StageCalls[engine.StageDelayed.String()]) / float64(on.Search.Wakeups)
	if err != nil || math.Abs(pct-want) > 1e-9 || pct <= 0 {
		t.Fatalf("delayed_requeue_pct %v (%v), stage_calls give %v", pct, err, want)
	}
	if cs, _, err := o.Metric("6.6:ctx_switches"); err != nil || cs != float64(results["6.6"][0].Balance.CtxSwitches) || cs == 0 {
		t.Fatalf("ctx_switches %v %v", cs, err)
	}
	if _, _, err := o.Metric("6.6:delayed_requeued"); err == nil || !strings.Contains(err.Error(), "era 6.6 has no delayed dequeue") {
		t.Fatalf("delayed metric of a 6.6 arm: %v", err)
	}

	failing := func(what string, mutate func(on, off *scenario.Result), rules ...string) {
		t.Helper()
		on2, off2 := *on, *off
		d1, d2 := *on.Delayed, *off.Delayed
		on2.Delayed, off2.Delayed = &d1, &d2
		mutate(&on2, &off2)
		r := map[string][]*scenario.Result{"6.6": results["6.6"], "6.12": {&on2}, "6.12-NO_DELAY_DEQUEUE": {&off2}}
		o := Evaluate(e, e.Quick, r)
		if o.Pass {
			t.Errorf("%s: the experiment passes", what)
		}
		for _, rule := range rules {
			for _, c := range o.Checks {
				if strings.HasPrefix(c.Rule, rule) && c.Pass {
					t.Errorf("%s: check %q passes: %s", what, c.Rule, c.Detail)
				}
			}
		}
	}
	failing("NO_DELAY_DEQUEUE delayed and requeued", func(_, off *scenario.Result) {
		off.Delayed.Delayed, off.Delayed.Requeued = 3, 1
	}, "NO_DELAY_DEQUEUE delays", "NO_DELAY_DEQUEUE requeues")
	failing("6.12 requeued nothing", func(on, _ *scenario.Result) {
		on.Delayed.Delayed, on.Delayed.Requeued = 0, 0
	}, "6.12 keeps", "6.12 wakes")
	failing("the arms ran era 6.6", func(on, off *scenario.Result) {
		on.Delayed, off.Delayed = nil, nil
	}, "6.12 keeps", "6.12 wakes", "NO_DELAY_DEQUEUE delays", "NO_DELAY_DEQUEUE requeues")
}
