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
