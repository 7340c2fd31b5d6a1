package workload

import (
	"testing"

	"schedplay/engine"
	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// spreadAfterUnpin starts n hogs pinned to CPU 0, widens their affinity to
// the whole machine and returns how many CPUs run exactly one hog after d.
func spreadAfterUnpin(t *testing.T, tp *machine.Topology, n int, d int64, sets ...string) (int, *engine.Sim) {
	k := knob.Defaults()
	for _, s := range sets {
		name, val, _ := cut(s)
		if err := k.Set(name, val); err != nil {
			t.Fatal(err)
		}
	}
	s, err := engine.New(engine.Config{Machine: tp, Knobs: k, Seed: 1, Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Add(s, "hog:n="+itoa(n)+",cpus=0", ""); err != nil {
		t.Fatal(err)
	}
	s.RunUntil(10 * engine.Millisecond)
	for i := 0; i < s.NumTasks(); i++ {
		if err := s.SetAffinity(engine.TaskID(i), tp.All); err != nil {
			t.Fatal(err)
		}
	}
	s.RunUntil(s.Now() + d)
	busy, _ := s.CPUTimes()
	_ = busy
	count := map[int]int{}
	for i := 0; i < s.NumTasks(); i++ {
		count[s.Task(engine.TaskID(i)).CPU()]++
	}
	single := 0
	for _, c := range count {
		if c == 1 {
			single++
		}
	}
	return single, s
}

// The load balancer spreads work: 8 hogs stacked on CPU 0 of an 8-core
// machine end up one per CPU once they may run anywhere — idle CPUs pull
// (NOHZ idle balance on their behalf, newly idle balance) and the periodic
// balance evens out the rest (kernel-reference.md §3).
func TestLoadBalancerSpreadsStackedHogs(t *testing.T) {
	tp := small(t, 2, 4, 1, 4, machine.Interleaved)
	single, _ := spreadAfterUnpin(t, tp, 8, 2*engine.Second)
	if single != 8 {
		t.Fatalf("after 2 s, %d of 8 hogs run alone on a CPU; want all 8", single)
	}
	// Without any balancing they stay stacked.
	single, _ = spreadAfterUnpin(t, tp, 8, 2*engine.Second, "LB_PERIODIC=false", "LB_NEWIDLE=false")
	if single != 0 {
		t.Fatalf("balancing off: %d hogs moved off CPU 0", single)
	}
}

// On an SMT machine, two hogs sharing a core while another core is idle
// are separated by the balancer (active balance of a running task after
// repeated failures: nothing queued can be pulled).
func TestBalancerSeparatesSMTSiblings(t *testing.T) {
	tp := small(t, 1, 2, 2, 2, machine.Interleaved) // CPUs 0,2 = core 0; 1,3 = core 1
	k := knob.Defaults()
	s, err := engine.New(engine.Config{Machine: tp, Knobs: k, Seed: 1, Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Add(s, "hog:n=2,place=cpu,cpus=0,2", ""); err != nil {
		t.Fatal(err)
	}
	s.RunUntil(10 * engine.Millisecond)
	for i := 0; i < 2; i++ {
		s.SetAffinity(engine.TaskID(i), cpumask.Range(4, 0, 3))
	}
	s.RunUntil(3 * engine.Second)
	a, b := s.Task(0).CPU(), s.Task(1).CPU()
	if tp.Core[a] == tp.Core[b] {
		t.Fatalf("hogs still share core %d (cpus %d, %d); balance %+v", tp.Core[a], a, b, s.Balance())
	}
	if s.Balance().ActiveBalances == 0 {
		t.Fatalf("expected an active balance, got %+v", s.Balance())
	}
}
