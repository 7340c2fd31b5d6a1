package engine

import (
	"testing"
)

// v5.2 find_idlest_group keeps a fork on the local NUMA node until the
// node's runnable load per unit of capacity exceeds the remote one's by
// imbalance = 1024·(125−100)/100 = 256 (kernel-reference.md §3.1: NUMA
// imbalance_pct 125). On the 44-CPU sockets of the Intel box one nice-0
// runnable task adds 1024·1024/(44·1024) ≈ 23.3, so the first 12 hogs
// forked from CPU 0 stay on socket 0 (11 present: 256 ≤ 0 + 256) and the
// 13th goes to socket 1.
func TestForkKeepsLocalNodeWithinImbalance(t *testing.T) {
	s := newSim(t, intelSpec(), 1)
	w := s.AddWorkload("hogs", "test")
	var sockets []int
	for range 14 {
		id, err := s.Spawn(w, TaskSpec{Name: "hog", ParentCPU: 0, Program: hog()})
		if err != nil {
			t.Fatal(err)
		}
		sockets = append(sockets, s.topo.Socket[s.tasks[id].cpu])
	}
	for i, sk := range sockets[:12] {
		if sk != 0 {
			t.Fatalf("hog %d forked onto socket %d, want the local socket 0 (sockets %v)", i, sk, sockets)
		}
	}
	if sockets[12] != 1 {
		t.Fatalf("hog 12 stayed on socket %d, want socket 1 once socket 0 is 12 tasks heavier (sockets %v)", sockets[12], sockets)
	}
}

// The v5.5 rework's find_idlest_group (6.1, 6.6) keeps a fork on the
// local node only while the idle CPUs of the two nodes differ by at most
// NUMA_IMBALANCE_MIN (2) and the local node would run at most imb_numa_nr
// tasks (44 CPUs in one LLC per socket: 44>>3 = 5); otherwise the node
// with more idle CPUs wins. Hogs forked from CPU 0 therefore go 0, 0, 0
// (differences 0, 1, 2), then 1 (difference 3), then 0 (2 again, 4 tasks
// ≤ 5), 1, and from the 6th task on socket 0 by idle CPUs alone. v5.2's
// rule would keep the first twelve local (the test above).
func TestForkSpreadsAcrossNodesByIdleCPUs6x(t *testing.T) {
	for _, era := range []string{"6.1", "6.6"} {
		s := newSim(t, intelSpec(), 1, "era", era)
		w := s.AddWorkload("hogs", "test")
		var sockets []int
		for range 6 {
			id, err := s.Spawn(w, TaskSpec{Name: "hog", ParentCPU: 0, Program: hog()})
			if err != nil {
				t.Fatal(err)
			}
			sockets = append(sockets, s.topo.Socket[s.tasks[id].cpu])
		}
		want := []int{0, 0, 0, 1, 0, 1}
		for i := range want {
			if sockets[i] != want[i] {
				t.Fatalf("era %s: forks landed on sockets %v, want %v", era, sockets, want)
			}
		}
	}
}

// forker forks n children one after another, paying cost per fork; each
// child blocks at once, as hackbench's children do at their barrier.
type forker struct {
	n, done int
	cost    int64
	forked  bool
	cpus    []int
}

func (f *forker) Next(ctx *Ctx) Action {
	if f.done == f.n {
		return Block()
	}
	if !f.forked {
		f.forked = true
		return KernelRun(f.cost)
	}
	f.forked = false
	f.done++
	id, err := ctx.Spawn(TaskSpec{Name: "child", Program: ProgramFunc(func(*Ctx) Action { return Block() })})
	if err != nil {
		panic(err)
	}
	f.cpus = append(f.cpus, ctx.sim.tasks[id].cpu)
	return KernelRun(f.cost)
}

// Children that block at once leave no runnable load behind, only their
// blocked load in the CPU's load_avg; find_idlest_group's avg_load
// comparison (with imbalance_scale) is what spreads them. If blocked load
// were ignored every child would land on the first idle group.
func TestForkSpreadsBlockedChildrenByBlockedLoad(t *testing.T) {
	s := newSim(t, smallSpec(1, 8, 1, 8, "interleaved"), 1)
	w := s.AddWorkload("fork", "test")
	f := &forker{n: 7, cost: 30 * Microsecond}
	if _, err := s.Spawn(w, TaskSpec{Name: "parent", ParentCPU: 0, Program: f}); err != nil {
		t.Fatal(err)
	}
	s.RunUntil(10 * Millisecond)
	if f.done != f.n {
		t.Fatalf("forked %d of %d", f.done, f.n)
	}
	seen := map[int]bool{}
	for _, c := range f.cpus {
		seen[c] = true
	}
	if len(seen) < 6 {
		t.Fatalf("7 blocking children landed on %d distinct CPUs %v, want them spread by blocked load (>= 6)", len(seen), f.cpus)
	}
	// The blocked load stays attached to the CPU each child slept on.
	for _, c := range f.cpus {
		if l := s.cpus[c].loadAvg.at(s.now); l <= 0 {
			t.Fatalf("CPU %d holds no blocked load (load_avg %d) for its sleeping child", c, l)
		}
	}
}

// task_fork_fair (fair.c, v5.2.1 @ fc4ec72d): a forked child starts from
// its parent's vruntime, placed no earlier than min_vruntime + vslice of
// the PARENT's runqueue, and keeps that offset when fork balancing puts it
// on another runqueue. Its first recent_used_cpu is the parent's CPU
// (wake_up_new_task). The old rule — place_entity on the target runqueue —
// would give the child one vslice of the (empty) target: a whole latency.
func TestForkChildStartsFromParentVruntime(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ahead int64 // how far the parent's vruntime is ahead of CPU 0's min_vruntime
	}{
		{"parent far ahead", 20 * Millisecond},
		{"parent at min_vruntime", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1,
				"LB_PERIODIC", "false", "LB_NEWIDLE", "false", "NUMA_BALANCING", "false")
			w := s.AddWorkload("fork", "test")
			cpu0 := cpumaskOf(s, 0)
			cpu1 := cpumaskOf(s, 1)
			var child *Task
			var wantRel, parentCPU int64 = -1, -1
			step := 0
			parent := ProgramFunc(func(ctx *Ctx) Action {
				step++
				switch step {
				case 1:
					return Run(Millisecond)
				case 2:
					p := ctx.task
					pc := ctx.sim.cpus[p.cpu]
					ctx.sim.updateCurr(pc)
					if tc.ahead > 0 {
						p.vruntime = pc.minVruntime + tc.ahead
					} else {
						p.vruntime = pc.minVruntime
					}
					// The vslice the child gets on the parent's runqueue:
					// the parent alone, plus the child.
					vslice := calcDeltaFair(ctx.sim.schedSlice(pc, &Task{weight: 1024}, false), 1024)
					wantRel = max(p.vruntime-pc.minVruntime, vslice)
					parentCPU = int64(p.cpu)
					id, err := ctx.Spawn(TaskSpec{Name: "child", Allowed: cpu1, Program: ProgramFunc(func(*Ctx) Action { return Block() })})
					if err != nil {
						panic(err)
					}
					child = ctx.sim.tasks[id]
					gotRel := child.vruntime - ctx.sim.cpus[1].minVruntime
					if child.cpu != 1 {
						t.Fatalf("child on CPU %d, want 1 (its only allowed CPU)", child.cpu)
					}
					if gotRel != wantRel {
						t.Fatalf("child vruntime is %d ns past CPU 1's min_vruntime, want %d (parent's offset or the parent runqueue's vslice)", gotRel, wantRel)
					}
					return Block()
				}
				return Block()
			})
			if _, err := s.Spawn(w, TaskSpec{Name: "parent", Allowed: cpu0, ParentCPU: 0, Program: parent}); err != nil {
				t.Fatal(err)
			}
			s.RunUntil(5 * Millisecond)
			if child == nil {
				t.Fatal("the parent never forked")
			}
			if int64(child.recentUsedCPU) != parentCPU {
				t.Fatalf("child recent_used_cpu %d, want the parent's CPU %d", child.recentUsedCPU, parentCPU)
			}
		})
	}
}

// A builder task has no parent task: it is forked as the kernel forks from
// a context with no CFS entity current on the runqueue (vruntime 0, then
// place_entity), i.e. one vslice of the ParentCPU's runqueue after that
// runqueue's min_vruntime, renormalised where fork balancing puts it; its
// recent_used_cpu is ParentCPU.
func TestBuilderTaskPlacedFromParentCPU(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1,
		"LB_PERIODIC", "false", "LB_NEWIDLE", "false", "NUMA_BALANCING", "false")
	w := s.AddWorkload("b", "test")
	// CPU 0 gets two hogs first, so its vslice for a newcomer is a third
	// of the latency while CPU 1's (empty) would be a whole latency.
	for range 2 {
		if _, err := s.Spawn(w, TaskSpec{Name: "hog", Allowed: cpumaskOf(s, 0), ParentCPU: 0, Program: hog()}); err != nil {
			t.Fatal(err)
		}
	}
	s.RunUntil(3 * Millisecond)
	c0 := s.cpus[0]
	s.updateCurr(c0)
	want := calcDeltaFair(s.schedSlice(c0, &Task{weight: 1024}, false), 1024)
	id, err := s.Spawn(w, TaskSpec{Name: "new", Allowed: cpumaskOf(s, 1), ParentCPU: 0, Program: hog()})
	if err != nil {
		t.Fatal(err)
	}
	nt := s.tasks[id]
	if got := nt.vruntime - s.cpus[1].minVruntime; got != want {
		t.Fatalf("builder task starts %d ns past CPU 1's min_vruntime, want one vslice of CPU 0's runqueue (%d)", got, want)
	}
	if nt.recentUsedCPU != 0 {
		t.Fatalf("builder task recent_used_cpu %d, want its ParentCPU 0", nt.recentUsedCPU)
	}
}
