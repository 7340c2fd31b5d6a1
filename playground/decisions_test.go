package playground

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"schedplay/engine"
)

// The log reads every decision of a run: the stages tried end with the
// stage that chose, the probes are the engine's, in order, each with a
// state, and latencies are filled in once the wakee runs.
func TestDecisionLogExplainsEveryWakeup(t *testing.T) {
	for arm := 0; arm < 2; arm++ {
		a, err := BuildArm(Default(), arm, nil, func(time.Duration, bool) {}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		l := Attach(a.Sim)
		stages := map[string]int{}
		var cursor int64
		for a.Sim.Now() < 150*engine.Millisecond {
			a.Sim.Step()
			var want []engine.Decision
			cursor = a.Sim.DecisionsSince(cursor, func(d *engine.Decision) {
				x := *d
				x.Probes = slices.Clone(d.Probes)
				want = append(want, x)
			})
			if len(want) == 0 {
				continue
			}
			got := l.Last(len(want))
			for i, d := range want {
				g := got[i]
				if g.Chosen != d.Chosen || g.Stage != d.Stage.String() || len(g.Probes) != len(d.Probes) {
					t.Fatalf("arm %d decision %d: logged %+v, engine %+v", arm, g.N, g, d)
				}
				for k, p := range g.Probes {
					if p.CPU != d.Probes[k] || p.State == "" || p.Stage == "" {
						t.Fatalf("arm %d decision %d probe %d: %+v, engine probed %d", arm, g.N, k, p, d.Probes[k])
					}
				}
				last := g.Stages[len(g.Stages)-1]
				stages[last.Stage]++
				if g.AffineWhy == "" || g.Wakee == "" {
					t.Fatalf("decision %d: no reason or wakee: %+v", g.N, g)
				}
			}
		}
		ran := 0
		for _, d := range l.Last(LogSize) {
			if d.LatencyNS >= 0 {
				ran++
			}
		}
		if ran == 0 || l.Count() == 0 {
			t.Errorf("arm %d: %d decisions, none with a latency", arm, l.Count())
		}
		t.Logf("arm %d: %d decisions, final stages %v", arm, l.Count(), stages)
		if stages["select_idle_cpu"] == 0 && stages["busy target"] == 0 {
			t.Errorf("arm %d: no decision went as far as select_idle_cpu: %v", arm, stages)
		}
	}
}

// The hooks allocate nothing in steady state (they run on every wakeup
// and context switch of the page's engine).
func TestDecisionLogHooksDoNotAllocate(t *testing.T) {
	a, err := BuildArm(Default(), 0, nil, func(time.Duration, bool) {}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := Attach(a.Sim)
	a.Sim.RunUntil(50 * engine.Millisecond)
	ds := a.Sim.RecentDecisions(8)
	if len(ds) == 0 {
		t.Fatal("no decisions")
	}
	task := a.Sim.Task(ds[0].Task)
	allocs := testing.AllocsPerRun(200, func() {
		for i := range ds {
			l.onWakeup(&ds[i])
			l.onSwitch(0, nil, task)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run of the hooks", allocs)
	}
}

// A wakeup on the O(1) era's uniprocessor does no search: its logged
// decision still carries empty (not null) stages and probes.
func TestDecisionWithoutSearchHasEmptyLists(t *testing.T) {
	st, err := Parse("preset=p4-up-1c-1t&w=pipe:l=50&era=2.6-o1")
	if err != nil {
		t.Fatal(err)
	}
	a, err := BuildArm(st, 0, nil, func(time.Duration, bool) {}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := Attach(a.Sim)
	for a.Sim.Now() < 20*engine.Millisecond && a.Sim.Step() {
	}
	logs := l.Last(LogSize)
	if len(logs) == 0 {
		t.Fatal("no decisions logged")
	}
	for _, d := range logs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"probes":null`) || strings.Contains(string(b), `"stages":null`) {
			t.Fatalf("decision written with null lists: %s", b)
		}
	}
}

// Era 6.12: a delayed task woken while still queued is requeued on its
// CPU by ttwu_runnable without select_task_rq. The panel shows that
// wakeup as its own outcome — one "delayed" stage, requeued on prev, no
// probes, wake_affine skipped — and never as a select_idle_sibling path.
func TestDelayedRequeueIsItsOwnOutcome(t *testing.T) {
	st, err := Parse("w=hackbench:g=10,l=400&era=6.12")
	if err != nil {
		t.Fatal(err)
	}
	a, err := BuildArm(st, 0, nil, func(time.Duration, bool) {}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := Attach(a.Sim)
	delayed, other := 0, 0
	seen := l.Count()
	for a.Sim.Now() < 40*engine.Millisecond && a.Sim.Step() {
		n := l.Count() - seen
		if n == 0 {
			continue
		}
		seen = l.Count()
		for _, d := range l.Last(int(min(n, LogSize))) {
			if d.Stage != engine.StageDelayed.String() {
				other++
				for _, s := range d.Stages {
					if s.Stage == "delayed" {
						t.Fatalf("decision %d by %s shows a delayed stage: %+v", d.N, d.Stage, d.Stages)
					}
				}
				continue
			}
			delayed++
			want := []Tried{{"delayed", fmt.Sprintf("requeued on prev CPU %d, no select_task_rq", d.Prev)}}
			if !slices.Equal(d.Stages, want) || len(d.Probes) != 0 || d.Chosen != d.Prev || d.Target != d.Prev {
				t.Fatalf("delayed decision %d: stages %+v probes %+v prev %d target %d chosen %d; want %+v, no probes, chosen = target = prev",
					d.N, d.Stages, d.Probes, d.Prev, d.Target, d.Chosen, want)
			}
			if d.Affine != "skipped" || !strings.Contains(d.AffineWhy, "ttwu_runnable") || !strings.Contains(d.AffineWhy, "select_task_rq is not called") {
				t.Fatalf("delayed decision %d: wake_affine %q: %q", d.N, d.Affine, d.AffineWhy)
			}
			if d.SISCalled || d.SISProbes != 0 || d.CostNS != 0 {
				t.Fatalf("delayed decision %d searched: %+v", d.N, d)
			}
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"probes":[]`) {
				t.Fatalf("delayed decision written without an empty probe list: %s", b)
			}
		}
	}
	if delayed == 0 || other == 0 {
		t.Fatalf("in 40 ms of hackbench on 6.12: %d delayed requeues, %d other decisions; the test needs both", delayed, other)
	}
	t.Logf("%d delayed requeues, %d other decisions", delayed, other)
	// The same workload in era 6.6 has no delayed dequeue: no such decision.
	st66, err := Parse("w=hackbench:g=10,l=400&era=6.6")
	if err != nil {
		t.Fatal(err)
	}
	a66, err := BuildArm(st66, 0, nil, func(time.Duration, bool) {}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	l66 := Attach(a66.Sim)
	for a66.Sim.Now() < 10*engine.Millisecond && a66.Sim.Step() {
		for _, d := range l66.Last(1) {
			if d.Stage == engine.StageDelayed.String() {
				t.Fatalf("era 6.6 logged a delayed requeue: %+v", d)
			}
		}
	}
}
