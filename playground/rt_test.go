package playground

import (
	"reflect"
	"strings"
	"testing"

	"schedplay/engine"
)

// rtLink runs RT cyclictest threads (SCHED_FIFO 80) beside an RT hog
// (SCHED_FIFO 90) on half the CPUs and a fair schbench: the wakeups of
// the RT threads whose CPU the hog holds go through find_lowest_rq.
const rtLink = "preset=amd-7950x-16c-32t&era=6.6&w=cyclictest:t=32,p=80&w=hog:n=16,policy=fifo,rtprio=90&w=schbench:m=1,t=4"

func buildLink(t *testing.T, link string) *engine.Sim {
	t.Helper()
	st, err := Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.Config(0)
	sim, err := cfg.Build()
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

// The decision panel explains an RT wakeup by cpupri: prev's level and
// the chosen CPU's, whether find_lowest_rq ran and its lowest mask; a
// fair wakeup has no RT part and its usual stages.
func TestDecisionLogRTPlacement(t *testing.T) {
	sim := buildLink(t, rtLink)
	log := Attach(sim)
	var lowest, kept, fair int
	for step := 1; step <= 40 && (lowest == 0 || kept == 0 || fair == 0); step++ {
		sim.RunUntil(int64(step) * 10 * engine.Millisecond)
		for _, d := range log.Last(LogSize) {
			switch d.Stage {
			case "rt_find_lowest_rq":
				r := d.RT
				if r == nil || r.Policy != "fifo" || r.RTPrio != 80 || !r.Cpupri || !r.FindLowest || r.LowestCPUs <= 0 || r.LowestLevel < 0 ||
					r.LowestLevel >= r.RTPrio || r.ChosenLevel != r.LowestLevel || r.PrevLevel < r.RTPrio {
					t.Fatalf("rt_find_lowest_rq decision: %+v", r)
				}
				if len(d.Stages) != 2 || d.Stages[1].Stage != "rt_find_lowest_rq" || !strings.Contains(d.Stages[1].Result, "chosen") || d.Affine != "skipped" {
					t.Fatalf("rt_find_lowest_rq stages: %+v (%s)", d.Stages, d.Affine)
				}
				lowest++
			case "rt_prev":
				r := d.RT
				if r == nil || !r.Cpupri || r.ChosenLevel != r.PrevLevel || d.Chosen != d.Prev {
					t.Fatalf("rt_prev decision: chosen %d prev %d %+v", d.Chosen, d.Prev, r)
				}
				kept++
			default:
				if d.RT != nil && d.RT.Cpupri {
					t.Fatalf("%s decision of %s has a cpupri part %+v", d.Stage, d.Wakee, d.RT)
				}
				if strings.HasPrefix(d.Wakee, "schbench") && len(d.Stages) > 0 && !strings.HasPrefix(d.Stages[0].Stage, "rt_") {
					fair++
				}
			}
		}
	}
	if lowest == 0 || kept == 0 || fair == 0 {
		t.Fatalf("rt_find_lowest_rq %d, rt_prev %d, fair %d decisions seen", lowest, kept, fair)
	}
}

// RTSelected tells select_task_rq_rt's decisions from the others (a
// fair wakee's, an RT wakee's in an era without select_task_rq_rt).
func TestRTSelected(t *testing.T) {
	for _, c := range []struct {
		d    engine.Decision
		want bool
	}{
		{engine.Decision{Stage: engine.StageRTPrev, LowestPri: -1}, true},
		{engine.Decision{Stage: engine.StageRTLowest, RTFind: true}, true},
		{engine.Decision{Stage: engine.StageFallback, LowestPri: -1}, true},
		{engine.Decision{Stage: engine.StageFallback, RTFind: true, LowestPri: 0, LowestN: 3}, true},
		{engine.Decision{Stage: engine.StageFallback}, false},
		{engine.Decision{Stage: engine.StageTarget}, false},
		{engine.Decision{Stage: engine.StagePinned}, false},
	} {
		if got := RTSelected(&c.d); got != c.want {
			t.Errorf("%s (RTFind %v, LowestPri %d): %v, want %v", c.d.Stage, c.d.RTFind, c.d.LowestPri, got, c.want)
		}
	}
}

// Fair decisions carry no RT data: the engine leaves the RT fields zero.
func TestFairDecisionsHaveNoRTFields(t *testing.T) {
	sim := buildLink(t, "w=schbench:m=2,t=8")
	n := 0
	sim.SetHooks(engine.Hooks{OnWakeup: func(d *engine.Decision) {
		n++
		if d.PrevPri != 0 || d.ChosenPri != 0 || d.RTFind || d.LowestPri != 0 || d.LowestN != 0 {
			t.Fatalf("fair decision with RT fields: %+v", *d)
		}
	}})
	sim.RunUntil(50 * engine.Millisecond)
	if n == 0 {
		t.Fatal("no decisions")
	}
}

// A snapshot says which CPUs run an RT task and which workloads are RT,
// and both survive the encoding, as do the RT decisions' fields.
func TestSnapshotRTFlagsAndClasses(t *testing.T) {
	sim := buildLink(t, rtLink)
	sim.RunUntil(100 * engine.Millisecond)
	var s Snapshot
	s.Fill(sim, 0, true, -1)
	if len(s.RT) != len(s.Views) {
		t.Fatalf("%d RT flags for %d CPUs", len(s.RT), len(s.Views))
	}
	rt := 0
	for c, v := range s.Views {
		want := v.Curr >= 0 && sim.Task(v.Curr).Policy() != engine.PolicyNormal
		if s.RT[c] != want {
			t.Errorf("CPU %d: RT %v, running %d", c, s.RT[c], v.Curr)
		}
		if s.RT[c] {
			rt++
			if v.Workload == 2 {
				t.Errorf("CPU %d: the fair schbench flagged RT", c)
			}
		}
	}
	if rt < 16 {
		t.Errorf("%d CPUs run an RT task, want at least the hog's 16", rt)
	}
	if got := []WorkloadClass{s.Hists[0].Class, s.Hists[1].Class, s.Hists[2].Class}; !reflect.DeepEqual(got, []WorkloadClass{ClassRT, ClassRT, ClassFair}) {
		t.Errorf("workload classes %v", got)
	}
	if ClassRT.Tag() != "RT" || ClassFair.Tag() != "" || ClassMixed.Tag() != "RT+fair" {
		t.Error("class tags")
	}
	var got Snapshot
	if err := got.Decode(s.Encode(nil)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.RT, s.RT) || got.Hists[0].Class != ClassRT || got.Hists[2].Class != ClassFair {
		t.Error("RT flags or classes differ after the round trip")
	}
	// An RT decision's cpupri fields survive too.
	d := engine.Decision{Stage: engine.StageRTLowest, PrevPri: 90, ChosenPri: 0, RTFind: true, LowestPri: 0, LowestN: 7, Probes: []int{}}
	s.Decisions = []engine.Decision{d}
	if err := got.Decode(s.Encode(nil)); err != nil {
		t.Fatal(err)
	}
	got.Decisions[0].Probes = d.Probes
	if !reflect.DeepEqual(got.Decisions[0], d) {
		t.Errorf("decision after the round trip %+v, want %+v", got.Decisions[0], d)
	}
}

// A mixed workload (an rt-app file with a SCHED_FIFO and a SCHED_OTHER
// task) is tagged RT+fair.
func TestSnapshotMixedClass(t *testing.T) {
	body := `{"global": {"duration": 1}, "tasks": {"rt": {"policy": "SCHED_FIFO", "run": 1000, "sleep": 1000}, "cfs": {"run": 1000, "sleep": 1000}}}`
	spec, err := WorkloadFromFile("mixed.json", []byte(body))
	if err != nil {
		t.Skipf("rt-app file: %v", err)
	}
	sim := buildLink(t, "era=6.6&w="+spec)
	sim.RunUntil(10 * engine.Millisecond)
	var s Snapshot
	s.Fill(sim, 0, false, -1)
	if s.Hists[0].Class != ClassMixed {
		t.Errorf("class %v, want mixed", s.Hists[0].Class)
	}
}
