package playground

import (
	"encoding/json"
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
