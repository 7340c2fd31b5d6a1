package engine

import "testing"

// LN_PREEMPT as Vincent Guittot's latency-nice series v12 has it (patch 5/8
// on top of 1/8, Message-ID 20230224093454.956298-6-vincent.guittot@linaro.org).
// On the 2-CPU test machine (factor 2): sched_latency 12 ms, so the sleep
// latency is 6 ms (GENTLE_FAIR_SLEEPERS) and a latency offset is
// 6 ms × latency_nice / 20 (-20 → -6 ms, 10 → 3 ms, 19 → 5.7 ms);
// min_granularity 1.5 ms, so get_latency_max = 4.5 ms; the wakeup
// granularity is 2 ms.
func TestLatencyNiceWakeupPreemption(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1)
	if got := s.latencyMax(); got != 4500*Microsecond {
		t.Fatalf("get_latency_max = %d, want 4.5 ms", got)
	}
	task := func(vruntime int64, ln int) *Task {
		return &Task{weight: 1024, vruntime: vruntime, LatencyNice: ln}
	}
	const base = 100 * Millisecond
	ms := func(f float64) int64 { return int64(f * float64(Millisecond)) }
	cases := []struct {
		name         string
		currLN, seLN int
		lead         int64 // wakee's vruntime lead over curr (negative: it trails)
		off, on      bool  // preempts with LN_PREEMPT off / on
	}{
		{"0 vs 0, 1 ms lead: under the granularity", 0, 0, ms(1), false, false},
		{"0 vs 0, 3 ms lead: over the granularity", 0, 0, ms(3), true, true},
		// Negative offsets are compared relative to each other.
		{"-20 wakee trailing a 0 task by 3 ms preempts", 0, -20, ms(-3), false, true},
		{"-20 wakee trailing a 0 task by 5 ms does not", 0, -20, ms(-5), false, false},
		{"-20 vs -20 is even: 1 ms lead is not enough", -20, -20, ms(1), false, false},
		{"-20 vs -20 is even: 3 ms lead is", -20, -20, ms(3), true, true},
		{"0 wakee needs > 4.5 ms lead on a -20 task: 4 ms", -20, 0, ms(4), true, false},
		{"0 wakee needs > 4.5 ms lead on a -20 task: 5 ms", -20, 0, ms(5), true, true},
		// A positive latency_nice delays preemption by the wakee's own
		// offset, whatever curr's (capped at get_latency_max).
		{"19 wakee with 3 ms lead on a 0 task waits", 0, 19, ms(3), true, false},
		{"19 wakee with 5 ms lead on a 0 task preempts", 0, 19, ms(5), true, true},
		{"10 vs 10 is not relative: 3 ms lead waits", 10, 10, ms(3), true, false},
		{"10 vs 10: 5 ms lead preempts", 10, 10, ms(5), true, true},
	}
	for _, c := range cases {
		for _, on := range []bool{false, true} {
			s.k.Set("LN_PREEMPT", map[bool]string{false: "false", true: "true"}[on])
			curr := task(base, c.currLN)
			se := task(base-c.lead, c.seLN)
			want := c.off
			if on {
				want = c.on
			}
			if got := s.wakeupPreemptLatency(curr, se) == 1; got != want {
				t.Errorf("%s (LN_PREEMPT=%t): preempts=%t, want %t", c.name, on, got, want)
			}
		}
	}
}

// check_preempt_tick with LN_PREEMPT (patch 5/8): the leftmost task's
// offset relative to curr's shifts the vruntime test, and curr is
// rescheduled once it leads by more than get_latency_max (4.5 ms) even
// inside its ideal slice.
func TestLatencyNiceTickPreemption(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1)
	c := s.cpus[0]
	// nr nice-0 tasks on c: curr has run ran and is ahead of the leftmost
	// queued task by ahead.
	tick := func(currLN, leftLN, nr int, ran, ahead int64) bool {
		curr := &Task{weight: 1024, vruntime: 100*Millisecond + ahead, LatencyNice: currLN,
			sumExec: ran, state: TaskRunning}
		left := &Task{weight: 1024, vruntime: 100 * Millisecond, LatencyNice: leftLN}
		c.curr, c.tree, c.nr, c.loadWeight = curr, []*Task{left}, nr, int64(nr)*1024
		defer func() { c.curr, c.tree, c.nr, c.loadWeight = nil, nil, 0, 0 }()
		return cfs{s}.checkPreemptTick(c)
	}
	// Two tasks: a 6 ms ideal slice. v5.2 keeps a curr 5 ms ahead...
	if tick(0, 0, 2, 2*Millisecond, 5*Millisecond) {
		t.Fatal("LN_PREEMPT off: curr 5 ms ahead was preempted inside its 6 ms slice")
	}
	s.k.Set("LN_PREEMPT", "true")
	// ...the series does not: 5 ms > get_latency_max.
	if !tick(0, 0, 2, 2*Millisecond, 5*Millisecond) {
		t.Fatal("LN_PREEMPT on: curr 5 ms ahead (> get_latency_max 4.5 ms) was not preempted")
	}
	if tick(0, 0, 2, 2*Millisecond, 4*Millisecond) {
		t.Fatal("LN_PREEMPT on: curr 4 ms ahead (< 4.5 ms) was preempted")
	}
	// Eight tasks: a 1.5 ms ideal slice. A latency-sensitive curr (-20)
	// 3 ms ahead of a 0 task keeps the CPU (relative offset 6 ms, capped
	// at 4.5 ms); a 0 curr does not.
	if !tick(0, 0, 8, 1500*Microsecond, 3*Millisecond) {
		t.Fatal("LN_PREEMPT on: a 0 curr 3 ms ahead with a 1.5 ms slice kept the CPU")
	}
	if tick(-20, 0, 8, 1500*Microsecond, 3*Millisecond) {
		t.Fatal("LN_PREEMPT on: a -20 curr 3 ms ahead of a 0 task lost the CPU at the tick")
	}
	s.k.Set("LN_PREEMPT", "false")
	if !tick(-20, 0, 8, 1500*Microsecond, 3*Millisecond) {
		t.Fatal("LN_PREEMPT off: latency_nice changed the tick")
	}
}
