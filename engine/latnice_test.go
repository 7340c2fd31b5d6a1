package engine

import "testing"

// LN_PREEMPT (RESEND thread, PeterZ: "when the wakee has a relative smaller
// latency-nice value than the current running task, it might preempt
// sooner and the other way around of course").
func TestLatencyNiceBiasesWakeupPreemption(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1)
	curr := &Task{weight: 1024, vruntime: 10 * Millisecond}
	lead := func(ns int64, ln int) *Task {
		return &Task{weight: 1024, vruntime: curr.vruntime - ns, LatencyNice: ln}
	}
	// Granularity at 2 CPUs: 1 ms × 2 = 2 ms. A 1 ms lead is not enough...
	if got := s.wakeupPreemptLatency(curr, lead(Millisecond, 0)); got == 1 {
		t.Fatalf("1 ms lead preempted without LN_PREEMPT")
	}
	s.k.Set("LN_PREEMPT", "true")
	if got := s.wakeupPreemptLatency(curr, lead(Millisecond, 0)); got == 1 {
		t.Fatalf("equal latency-nice changed the outcome")
	}
	// ...unless the wakee is latency sensitive: -20 lends a whole latency.
	if got := s.wakeupPreemptLatency(curr, lead(Millisecond, -20)); got != 1 {
		t.Fatalf("latency-nice -20 wakee with 1 ms lead did not preempt")
	}
	// A latency-tolerant wakee does not preempt even with a big lead.
	if got := s.wakeupPreemptLatency(curr, lead(5*Millisecond, 19)); got == 1 {
		t.Fatalf("latency-nice 19 wakee preempted")
	}
	s.k.Set("LN_PREEMPT", "false")
	if got := s.wakeupPreemptLatency(curr, lead(5*Millisecond, 19)); got != 1 {
		t.Fatalf("5 ms lead did not preempt without LN_PREEMPT")
	}
}
