package engine

import (
	"testing"

	"schedplay/engine/cpumask"
)

// Mechanism tests of era 6.6's EEVDF class (eevdf.go; kernel/sched/fair.c
// at v6.6: entity_eligible, pick_eevdf, place_entity, update_entity_lag,
// check_preempt_wakeup).

// queued makes a runnable task of weight w with the given vruntime and
// deadline and puts it in c's tree (which keeps the avg_vruntime sums).
func queued(s *Sim, c *cpu, name string, nice int, v, dl int64) *Task {
	t := &Task{ID: TaskID(len(s.tasks)), Name: name, Nice: nice, weight: NiceToWeight(nice),
		state: TaskRunnable, cpu: c.id, vruntime: v, deadline: dl, slice: s.baseSliceNS,
		allowed: cpumask.Of(s.topo.NCPU, c.id), lastWakee: -1, recentUsedCPU: -1}
	s.tasks = append(s.tasks, t)
	s.treeInsert66(c, t)
	c.nr++
	c.loadWeight += t.weight
	return t
}

func eevdfSim(t *testing.T, sets ...string) (*Sim, *cpu) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, append([]string{"era", "6.6"}, sets...)...)
	return s, s.cpus[0]
}

// pick_eevdf chooses only among eligible entities (v_i <= V), and among
// them the earliest virtual deadline wins, not the leftmost vruntime.
func TestEEVDFPicksEarliestDeadlineAmongEligible(t *testing.T) {
	s, c := eevdfSim(t)
	a := queued(s, c, "a", 0, 0, 900)         // leftmost, eligible, late deadline
	b := queued(s, c, "b", 0, 300, 600)       // eligible, earlier deadline
	late := queued(s, c, "late", 0, 3000, 10) // earliest deadline, ineligible
	// V = (0 + 300 + 3000) / 3 = 1100.
	if v := s.avgVruntime(c); v != 1100 {
		t.Fatalf("avg_vruntime %d, want 1100", v)
	}
	if !s.entityEligible(c, a) || !s.entityEligible(c, b) || s.entityEligible(c, late) {
		t.Fatalf("eligibility a %v b %v late %v, want true true false",
			s.entityEligible(c, a), s.entityEligible(c, b), s.entityEligible(c, late))
	}
	if got := s.pickEEVDF(c, nil); got != b {
		t.Fatalf("picked %s, want b (earliest deadline among eligible)", got.Name)
	}
	// Weight moves V: a nice -10 task far behind drags V under b.
	s2, c2 := eevdfSim(t)
	queued(s2, c2, "a", 0, 0, 900)
	b2 := queued(s2, c2, "b", 0, 300, 600)
	heavy := queued(s2, c2, "heavy", -10, 0, 1000)
	if s2.entityEligible(c2, b2) {
		t.Fatalf("b eligible with V = %d", s2.avgVruntime(c2))
	}
	if got := s2.pickEEVDF(c2, nil); got.Name != "a" {
		t.Fatalf("picked %s, want a (b is no longer eligible, a's deadline beats heavy's)", got.Name)
	}
	_ = heavy
}

// place_entity with PLACE_LAG: a task's lag survives its own placement,
// because it is inflated by (W + w_i)/W first; without PLACE_LAG the task
// is placed at V.
func TestEEVDFPlaceLagIsPreserved(t *testing.T) {
	for _, lag := range []int64{-300, 0, 450} {
		s, c := eevdfSim(t)
		queued(s, c, "x", 0, 0, 1000)
		queued(s, c, "y", 5, 100, 1000)
		p := &Task{ID: 99, Name: "p", weight: NiceToWeight(-3), vlag: lag, state: TaskRunnable, cpu: 0}
		v := s.avgVruntime(c)
		s.placeEntity(c, p, false)
		s.treeInsert66(c, p)
		c.nr++
		got := s.avgVruntime(c) - p.vruntime
		if got < lag-1 || got > lag+1 {
			t.Errorf("lag %d: after placement V'-v = %d", lag, got)
		}
		if p.deadline != p.vruntime+calcDeltaFair(s.baseSliceNS, p.weight) {
			t.Errorf("lag %d: deadline %d, want vruntime + slice/w", lag, p.deadline)
		}
		s2, c2 := eevdfSim(t, "PLACE_LAG", "false")
		queued(s2, c2, "x", 0, 0, 1000)
		queued(s2, c2, "y", 5, 100, 1000)
		q := &Task{ID: 99, Name: "q", weight: NiceToWeight(-3), vlag: lag}
		s2.placeEntity(c2, q, false)
		if q.vruntime != v {
			t.Errorf("PLACE_LAG off, lag %d: placed at %d, want V = %d", lag, q.vruntime, v)
		}
	}
}

// End to end, the lag a task has when it blocks is the lag it has when it
// is enqueued again: a task that runs 2 ms and sleeps 3 ms beside a hog on
// one CPU.
func TestEEVDFLagCarriedAcrossSleep(t *testing.T) {
	s, c := eevdfSim(t, "IDLE_STATES", "false")
	s.debug = true
	w := s.AddWorkload("mix", "mix")
	spawnOn(t, s, w, "hog", 0, 0, hog())
	step := 0
	p := spawnOn(t, s, w, "sleeper", 0, 0, ProgramFunc(func(*Ctx) Action {
		step++
		if step%2 == 1 {
			return Run(2 * Millisecond)
		}
		return Sleep(3 * Millisecond)
	}))
	prev := p.state
	var saved int64
	sleeps, wakes, nonzero := 0, 0, 0
	for s.now < Second && s.Step() {
		switch {
		case prev == TaskRunning && p.state == TaskBlocked:
			saved = p.vlag
			sleeps++
			if saved != 0 {
				nonzero++
			}
		case prev == TaskBlocked && p.state == TaskRunnable:
			wakes++
			if got := s.avgVruntime(c) - p.vruntime; got < saved-1 || got > saved+1 {
				t.Fatalf("wakeup %d: lag after placement %d, saved at sleep %d", wakes, got, saved)
			}
		}
		prev = p.state
	}
	if wakes < 100 || nonzero < wakes/2 {
		t.Fatalf("%d sleeps, %d wakeups, %d with a non-zero lag: the test saw too little", sleeps, wakes, nonzero)
	}
}

// runningCurr makes t c's running task (as set_next_entity leaves it).
func runningCurr(s *Sim, c *cpu, name string, v, dl int64) *Task {
	t := &Task{ID: TaskID(len(s.tasks)), Name: name, weight: nice0Load, state: TaskRunning, cpu: c.id,
		vruntime: v, deadline: dl, pickDeadline: dl, slice: s.baseSliceNS, execStart: s.now,
		allowed: cpumask.Of(s.topo.NCPU, c.id), lastWakee: -1, recentUsedCPU: -1}
	s.tasks = append(s.tasks, t)
	c.curr = t
	c.nr++
	c.loadWeight += t.weight
	return t
}

// Wakeup preemption by deadline: the wakee preempts when pick_eevdf,
// curr included, would choose it — it is eligible and its deadline is
// earlier — unless RUN_TO_PARITY keeps an eligible curr that has not
// finished the slice it was picked with.
func TestEEVDFWakeupPreemptionByDeadline(t *testing.T) {
	for _, c := range []struct {
		name            string
		parity          string
		currV, currDL   int64
		wakeV, wakeDL   int64
		picked, preempt bool
	}{
		{"earlier deadline preempts", "false", 1000, 5000, 0, 2000, true, true},
		{"later deadline does not", "false", 1000, 5000, 0, 6000, true, false},
		{"run to parity keeps an eligible curr", "true", 1000, 5000, 0, 2000, true, false},
		{"run to parity yields once curr got a new slice", "true", 1000, 5000, 0, 2000, false, true},
		{"an ineligible curr is preempted despite parity", "true", 9000, 12000, 0, 2000, true, true},
		{"an ineligible wakee never preempts", "false", 0, 5000, 9000, 100, true, false},
	} {
		s, cp := eevdfSim(t, "RUN_TO_PARITY", c.parity)
		curr := runningCurr(s, cp, "curr", c.currV, c.currDL)
		queued(s, cp, "filler", 0, 4000, 100000) // lifts V so curr and wakee can both be eligible
		if !c.picked {
			curr.pickDeadline = c.currDL - 1 // update_deadline gave it a new one since
		}
		p := queued(s, cp, "wakee", 0, c.wakeV, c.wakeDL)
		if got := s.class.wakeupPreempt(cp, p); got != c.preempt {
			t.Errorf("%s: preempt %v, want %v (V %d)", c.name, got, c.preempt, s.avgVruntime(cp))
		}
	}
}

// End to end: a task that runs 100 µs every 10 ms beside a hog on one CPU.
// With WAKEUP_PREEMPTION most wakeups preempt the hog at once: the wakee
// brings back the positive lag it left with, which makes the hog
// ineligible. Not all: each 100 µs run spends half of that lag (V moves at
// half the runner's speed with two equal weights), and a wakee that left
// with a negative lag waits, up to the end of the hog's slice, as EEVDF
// gives no sleeper credit. Without WAKEUP_PREEMPTION every wakeup waits for
// the hog's slice to end at update_deadline, checked at the tick: up to
// 1.5 ms (0.75 ms × (1 + ilog2(2)) on this 2-CPU machine) plus a tick.
// Without PLACE_LAG the wakee is placed at V, level with the hog, whose
// earlier deadline then wins: no preemption either.
func TestEEVDFWakeupPreemptionEndToEnd(t *testing.T) {
	run := func(sets ...string) (p50, p99, max int64) {
		s, _ := eevdfSim(t, append(sets, "IDLE_STATES", "false")...)
		s.debug = true
		w := s.AddWorkload("mix", "mix")
		spawnOn(t, s, w, "hog", 0, 0, hog())
		step := 0
		spawnOn(t, s, w, "sleeper", 0, 0, ProgramFunc(func(*Ctx) Action {
			step++
			if step%2 == 1 {
				return Run(100 * Microsecond)
			}
			return Sleep(10 * Millisecond)
		}))
		s.RunUntil(2 * Second)
		l := s.workloads[w].wakeLat.Summarize()
		return l.P50, l.P99, l.Max
	}
	if p50, p99, _ := run(); p50 > 50 || p99 < 500 {
		t.Errorf("with wakeup preemption p50 = %d us (want a few), p99 = %d us (want the waits of a slice)", p50, p99)
	}
	for _, off := range [][]string{{"WAKEUP_PREEMPTION", "false"}, {"PLACE_LAG", "false"}} {
		if p50, _, max := run(off...); p50 < 500 || max > 2600 {
			t.Errorf("%v: p50 %d us, max %d us; want every wakeup to wait for the hog's slice to end (<= 2.5 ms)", off, p50, max)
		}
	}
}

// A slice ends at the deadline: two hogs on one CPU alternate every base
// slice (1.5 ms scaled on 2 CPUs), rounded up to the 1 ms tick at which
// update_curr notices — about 500 switches a second, against v5.2's ~150
// (6 ms ideal slices, TestTickPreemptionSlice).
func TestEEVDFSliceEndsAtDeadline(t *testing.T) {
	s, _ := eevdfSim(t)
	if s.baseSliceNS != 1500*Microsecond {
		t.Fatalf("scaled base slice %d, want 1.5 ms", s.baseSliceNS)
	}
	w := s.AddWorkload("hogs", "hog")
	a := spawnOn(t, s, w, "a", 0, 0, hog())
	b := spawnOn(t, s, w, "b", 0, 0, hog())
	s.RunUntil(Second)
	sw := s.stats.ctxSwitches
	if sw < 450 || sw > 560 {
		t.Fatalf("%d context switches in 1 s, want ~500 (2 ms turns)", sw)
	}
	s.updateCurr(s.cpus[0])
	if r := float64(a.sumExec) / float64(b.sumExec); r < 0.97 || r > 1.03 {
		t.Fatalf("CPU time ratio %.3f, want 1", r)
	}
}

// A new task in v6.6: task_fork_fair places it with half a slice, but
// wake_up_new_task's enqueue places it again without ENQUEUE_INITIAL, so
// it starts at the destination's V with a whole slice to its deadline.
func TestEEVDFNewTaskPlacement(t *testing.T) {
	s, c := eevdfSim(t)
	w := s.AddWorkload("hogs", "hog")
	spawnOn(t, s, w, "a", 0, 0, hog())
	s.RunUntil(10 * Millisecond)
	s.updateCurr(c)
	v := s.avgVruntime(c)
	b := spawnOn(t, s, w, "b", 0, 0, hog())
	if b.vruntime != v || b.deadline != v+s.baseSliceNS {
		t.Fatalf("new task at v=%d dl=%d, want v=%d dl=%d", b.vruntime, b.deadline, v, v+s.baseSliceNS)
	}
}
