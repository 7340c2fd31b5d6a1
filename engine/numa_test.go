package engine

import "testing"

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
