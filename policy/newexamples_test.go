package policy_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"schedplay/engine"
	"schedplay/scenario"
)

// checked wraps an example's instances: after each call that returns
// stage "policy" it runs check on the view (the CPUs' state is that of
// the call: a decision takes no simulated time) and counts the calls.
type checked struct {
	prog  scenario.WakePolicy
	check func(v *engine.WakeView, cpu int) error
	picks *int
	errs  *[]string
}

func (c checked) Name() string { return c.prog.Name() }
func (c checked) New() engine.WakePolicy {
	return checkedInst{c, c.prog.New()}
}

type checkedInst struct {
	c     checked
	inner engine.WakePolicy
}

func (ci checkedInst) SelectIdleSibling(v *engine.WakeView) (int, engine.Stage, error) {
	cpu, st, err := ci.inner.SelectIdleSibling(v)
	if err == nil && st == engine.StagePolicy {
		*ci.c.picks++
		if e := ci.c.check(v, cpu); e != nil && len(*ci.c.errs) < 5 {
			*ci.c.errs = append(*ci.c.errs, e.Error())
		}
	}
	return cpu, st, err
}

func must[T any](x T, err error) T {
	if err != nil {
		panic(err)
	}
	return x
}

// idleIn reports whether cpu is idle, from its LLC's idle mask.
func idleIn(v *engine.WakeView, cpu int) bool {
	llc := must(v.LLCOf(cpu))
	cpus := must(v.LLCCPUs(cpu))
	m := must(v.IdleMask(llc))
	for i, c := range cpus {
		if c == cpu {
			return m&(1<<i) != 0
		}
	}
	return false
}

func runChecked(t *testing.T, file, preset, wl string, dur int64, era string, check func(v *engine.WakeView, cpu int) error) int {
	t.Helper()
	var picks int
	var errs []string
	c := checked{prog: load(t, file), check: check, picks: &picks, errs: &errs}
	r, err := scenario.Run(scenario.Config{Preset: preset, Workloads: []string{wl}, Seed: 3, Duration: dur,
		Knobs: []string{"era=" + era}, WakePolicy: c})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Error(e)
	}
	if r.Search.StageCalls["policy"] != int64(picks) {
		t.Errorf("stage policy %d, picks %d", r.Search.StageCalls["policy"], picks)
	}
	return picks
}

// sis-node.star finds idle CPUs in the other LLCs of the target's node
// when its own comes up empty, and never leaves the node.
func TestSISNode(t *testing.T) {
	sameNode := func(v *engine.WakeView, cpu int) error {
		t := v.Target()
		switch {
		case must(v.NodeOf(cpu)) != must(v.NodeOf(t)):
			return fmt.Errorf("CPU %d is in node %d, target %d in node %d", cpu, must(v.NodeOf(cpu)), t, must(v.NodeOf(t)))
		case must(v.LLCOf(cpu)) == must(v.LLCOf(t)):
			return fmt.Errorf("CPU %d is in target %d's LLC", cpu, t)
		case !idleIn(v, cpu):
			return fmt.Errorf("CPU %d is not idle", cpu)
		}
		return nil
	}
	for _, era := range []string{"6.6", "6.12"} {
		// two LLCs in one node: the search crosses to the other LLC
		if n := runChecked(t, "sis-node.star", "amd-7950x-16c-32t", "hackbench:g=2,l=200", 300*engine.Millisecond, era, sameNode); n == 0 {
			t.Errorf("era %s, 7950x: no wakeup placed in the other LLC", era)
		} else {
			t.Logf("era %s, 7950x: %d wakeups placed in the other LLC", era, n)
		}
		// one LLC per node: there is nowhere to go
		if n := runChecked(t, "sis-node.star", "intel-2s-44c-88t", "hackbench:g=4,l=100", 200*engine.Millisecond, era, sameNode); n != 0 {
			t.Errorf("era %s, intel 2s: %d wakeups placed by SIS_NODE with one LLC per node", era, n)
		}
	}
}

// poc-selector.star places by the LLC's idle masks: every pick is idle,
// and while a whole core is idle it never picks a CPU whose sibling is
// busy (the strict core priority of its levels 3 and 6).
func TestPOCSelector(t *testing.T) {
	check := func(v *engine.WakeView, cpu int) error {
		if !idleIn(v, cpu) {
			return fmt.Errorf("CPU %d is not idle", cpu)
		}
		if !v.SMTPresent() || cpu == v.Target() {
			return nil
		}
		llc := must(v.LLCOf(cpu))
		if must(v.IdleCoreMask(llc)) == 0 {
			return nil
		}
		for _, s := range must(v.Siblings(cpu)) {
			if !idleIn(v, s) {
				return fmt.Errorf("CPU %d picked beside busy sibling %d while the LLC has an idle core", cpu, s)
			}
		}
		return nil
	}
	for _, tc := range []struct{ preset, wl string }{
		{"amd-7950x-16c-32t", "schbench:m=4,t=8"},
		{"amd-7950x-16c-32t", "hackbench:g=2,l=200"},
		{"intel-2s-44c-88t", "hackbench:g=4,l=100"},
	} {
		n := runChecked(t, "poc-selector.star", tc.preset, tc.wl, 300*engine.Millisecond, "6.12", check)
		if n == 0 {
			t.Errorf("%s %s: no wakeup placed by the masks", tc.preset, tc.wl)
		}
		t.Logf("%s %s: %d wakeups placed by the masks", tc.preset, tc.wl, n)
	}
}

// TestTwoChoices: two-choices.star probes at most two CPUs per
// select_idle_cpu, its draws are the run's seed's (the same seed, the same
// run; another seed, another run), and a run without rand is unchanged
// by the policy's random source existing (the equality tests).
func TestTwoChoices(t *testing.T) {
	prog := load(t, "two-choices.star")
	run := func(seed uint64) ([]byte, *scenario.Result) {
		c := scenario.Config{Preset: "amd-7950x-16c-32t", Workloads: []string{"schbench:m=4,t=16"}, Seed: seed,
			Duration: 500 * engine.Millisecond, Knobs: []string{"era=6.6"}, WakePolicy: prog}
		r, err := scenario.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		r.SimWallS = 0
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b, r
	}
	a, r := run(3)
	b, _ := run(3)
	c, _ := run(4)
	if string(a) != string(b) {
		t.Error("the same seed gave two runs")
	}
	if string(a) == string(c) {
		t.Error("seeds 3 and 4 gave the same run")
	}
	s := r.Search
	if s.SelectIdleCPUCalls == 0 || s.ProbesMean <= 0 || s.ProbesMean > 2 {
		t.Errorf("select_idle_cpu calls %d, probes per call %.2f: want calls and at most 2 probes each", s.SelectIdleCPUCalls, s.ProbesMean)
	}
	// a bare CPU from the select_idle_cpu hook counts as select_idle_cpu's find
	if s.FoundIdlePct <= 0 || r.Search.StageCalls["select_idle_cpu"] == 0 {
		t.Errorf("select_idle_cpu found an idle CPU in %.1f%% of its calls, placed %d wakeups: want some", s.FoundIdlePct, r.Search.StageCalls["select_idle_cpu"])
	}
	t.Logf("%d select_idle_cpu calls, %.2f probes each, %.1f%% found idle", s.SelectIdleCPUCalls, s.ProbesMean, s.FoundIdlePct)
}
