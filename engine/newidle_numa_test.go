package engine

import (
	"testing"

	"schedplay/engine/cpumask"
	"schedplay/engine/machine"
)

// An idle NUMA node gets load from an overloaded one mainly when one of
// its CPUs goes newly idle. v5.2.1 kernel/sched/fair.c (linux-5.2.1
// mirror, commit fc4ec72ddfe7848ad451612b56fc6429879e8d7e):
// pick_next_task_fair calls idle_balance whenever the fair class has
// nothing left to run, whatever ran last (a kworker, a stopper), and
// idle_balance walks every domain with SD_BALANCE_NEWIDLE, the NUMA level
// included, ignoring balance intervals (gated only by avg_idle against
// sysctl_sched_migration_cost and root_domain->overload). The periodic
// NUMA pass of an idle node, by contrast, is made by its first idle CPU
// only (should_we_balance) every balance_interval = span weight ms.
// So a short kernel thread on an idle socket is what lets it pull: the
// test runs the same overloaded socket 0 with and without one.
func TestKthreadOnIdleNodeTriggersNewidlePullAcrossNUMA(t *testing.T) {
	spec := smallSpec(2, 4, 1, 4, machine.Interleaved) // CPUs 0-3 socket 0, 4-7 socket 1
	run := func(kthread bool, sets ...string) (onNode1 int, newidle bool) {
		hogs := []lbHog{}
		for c := 0; c < 4; c++ {
			hogs = append(hogs, lbHog{cpu: c}, lbHog{cpu: c})
		}
		s, tasks := lbSetup(t, spec, hogs, sets...)
		for c := 0; c < 4; c++ {
			cool(s, c)
		}
		if !s.overloaded {
			t.Fatal("precondition: socket 0 has tasks waiting, root_domain->overload should be set")
		}
		if kthread {
			w := s.AddWorkload("kworker", "test")
			done := false
			prog := ProgramFunc(func(*Ctx) Action {
				if done {
					return Exit()
				}
				done = true
				return Run(15 * Microsecond)
			})
			if _, err := s.Spawn(w, TaskSpec{Name: "kworker/6", Kthread: true, ParentCPU: 6,
				Allowed: cpumask.Of(s.topo.NCPU, 6), Program: prog}); err != nil {
				t.Fatal(err)
			}
		}
		calls := s.stats.lbCalls
		s.RunUntil(s.now + Millisecond)
		if err := s.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		for _, p := range tasks {
			if s.topo.Socket[p.cpu] == 1 {
				onNode1++
			}
		}
		return onNode1, s.stats.lbCalls > calls
	}
	// LB_NEWIDLE on, periodic balancing off: only newly idle passes act.
	if n, _ := run(false, "LB_NEWIDLE", "true"); n != 0 {
		t.Fatalf("no activity on socket 1: %d hogs moved there, want 0 (its CPUs never go newly idle)", n)
	}
	n, passes := run(true, "LB_NEWIDLE", "true")
	if !passes || n == 0 {
		t.Fatalf("a 15 µs kthread on CPU 6: %d hogs on socket 1 (balance passes: %v), want its newly idle pass to pull across the NUMA level", n, passes)
	}
	if n, _ := run(true); n != 0 {
		t.Fatalf("LB_NEWIDLE off: %d hogs moved to socket 1, want 0", n)
	}
}
