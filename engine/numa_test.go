package engine

import (
	"testing"

	"schedplay/engine/cpumask"
)

// v5.2's load_too_imbalanced refuses a NUMA move that makes the nodes'
// load difference larger, however small (25/25 → 24/26); kernels before
// it allowed anything within imbalance_pct (26/24 is 108% < 112%). A move
// from the busier node to the idler one is allowed.
func TestNUMAMoveMustNotWorsenImbalance(t *testing.T) {
	s := newSim(t, smallSpec(2, 32, 1, 32, "interleaved"), 1, "LB_PERIODIC", "false", "LB_NEWIDLE", "false")
	w := s.AddWorkload("hogs", "test")
	var onNode1 *Task
	for i := 0; i < 25; i++ {
		spawnOn(t, s, w, "a", i, 0, hog())
		onNode1 = spawnOn(t, s, w, "b", 32+i, 0, hog())
	}
	s.RunUntil(300 * Millisecond)
	if !s.numaTooImbalanced(onNode1, 1, 0) {
		t.Fatal("25/25 → 26/24 allowed; v5.2 refuses a move that widens the imbalance")
	}
	extra := spawnOn(t, s, w, "c", 33, 0, hog())
	s.RunUntil(600 * Millisecond)
	if s.numaTooImbalanced(extra, 1, 0) {
		t.Fatal("25/26 → 26/25 refused; it leaves the imbalance as it is")
	}
}

// numaHog spawns a hog on cpu whose memory is on node mem (-1: where it
// first runs), then lets it run on the CPUs of allowed: pinned at first,
// so that fork balancing cannot place it elsewhere.
func numaHog(t *testing.T, s *Sim, w WorkloadID, name string, cpu, mem int, allowed cpumask.Mask) *Task {
	t.Helper()
	spec := TaskSpec{Name: name, Allowed: cpumask.Of(s.topo.NCPU, cpu), ParentCPU: cpu, Program: hog()}
	if mem >= 0 {
		spec.Memory, spec.MemNode = MemNode, mem
	}
	id, err := s.Spawn(w, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAffinity(id, allowed); err != nil {
		t.Fatal(err)
	}
	return s.tasks[id]
}

// numaSim is 2 nodes of n single-thread cores, one LLC each, with no load
// balancing (only NUMA balancing moves tasks) and NUMA placement checks
// from the start; it returns the sim and each node's CPUs in order.
func numaSim(t *testing.T, n int) (*Sim, [2][]int) {
	s := newSim(t, smallSpec(2, n, 1, n, "interleaved"), 1, "LB_PERIODIC", "false", "LB_NEWIDLE", "false",
		"numa_balancing_scan_delay_ms", "0")
	var nodes [2][]int
	for nid := range nodes {
		span := s.topo.SocketSpan[nid]
		for id := span.First(); id >= 0; id = span.Next(id + 1) {
			nodes[nid] = append(nodes[nid], id)
		}
	}
	return s, nodes
}

// v5.2 task_numa_compare: with no idle CPU on its memory's node, a task
// moves onto a busy one there when the load allows it (maymove) and
// moving alone gains more than swapping with the task running there (a
// task at home: the swap would gain nothing). Of equal busy CPUs the
// first wins (the comparison with best_imp is strict).
func TestNUMAMovesOntoBusyCPU(t *testing.T) {
	s, nodes := numaSim(t, 2)
	all := cpumask.Range(s.topo.NCPU, 0, s.topo.NCPU-1)
	w := s.AddWorkload("hogs", "test")
	// Node 1 carries 3 hogs, node 0 two: moving p evens them (3/2 → 2/3).
	p := numaHog(t, s, w, "p", nodes[1][0], 0, all)
	numaHog(t, s, w, "pinned1", nodes[1][1], 1, cpumask.Of(s.topo.NCPU, nodes[1][1]))
	numaHog(t, s, w, "pinned2", nodes[1][1], 1, cpumask.Of(s.topo.NCPU, nodes[1][1]))
	numaHog(t, s, w, "home0", nodes[0][0], 0, all)
	numaHog(t, s, w, "home1", nodes[0][1], 0, all)
	s.RunUntil(200 * Millisecond)
	if p.cpu != nodes[0][0] {
		t.Fatalf("p on CPU %d, want the first busy CPU %d of its memory's node", p.cpu, nodes[0][0])
	}
	if s.NUMAMigrations() != 1 || s.NUMASwaps() != 0 {
		t.Fatalf("%d moves, %d swaps; want 1 move", s.NUMAMigrations(), s.NUMASwaps())
	}
}

// v5.2 task_numa_compare: two tasks each running on the other's memory
// node swap (migrate_swap), even though an idle CPU there would take a
// plain move: the swap gains both tasks' faults (2000) against the move's
// 1000.
func TestNUMASwapsMisplacedPair(t *testing.T) {
	s, nodes := numaSim(t, 2)
	all := cpumask.Range(s.topo.NCPU, 0, s.topo.NCPU-1)
	w := s.AddWorkload("hogs", "test")
	p := numaHog(t, s, w, "p", nodes[1][0], 0, all)
	q := numaHog(t, s, w, "q", nodes[0][0], 1, all)
	// A second task on node 1 lets p move alone (2/1 → 1/2), so the idle
	// CPU nodes[0][1] is a real alternative.
	numaHog(t, s, w, "pinned", nodes[1][1], 1, cpumask.Of(s.topo.NCPU, nodes[1][1]))
	s.RunUntil(200 * Millisecond)
	if p.cpu != nodes[0][0] || q.cpu != nodes[1][0] {
		t.Fatalf("p on CPU %d, q on %d; want them swapped onto %d and %d", p.cpu, q.cpu, nodes[0][0], nodes[1][0])
	}
	if s.NUMASwaps() != 1 || s.NUMAMigrations() != 0 {
		t.Fatalf("%d swaps, %d moves; want 1 swap", s.NUMASwaps(), s.NUMAMigrations())
	}
}

// v5.2 task_numa_compare takes an idle CPU when the move gains at least
// the best so far (">="): of several idle CPUs of the node, the last one
// wins.
func TestNUMALastIdleCPUWins(t *testing.T) {
	s, nodes := numaSim(t, 3)
	all := cpumask.Range(s.topo.NCPU, 0, s.topo.NCPU-1)
	w := s.AddWorkload("hogs", "test")
	p := numaHog(t, s, w, "p", nodes[1][0], 0, all)
	s.RunUntil(200 * Millisecond)
	if last := nodes[0][len(nodes[0])-1]; p.cpu != last {
		t.Fatalf("p on CPU %d, want the last idle CPU %d of node 0 %v", p.cpu, last, nodes[0])
	}
}
