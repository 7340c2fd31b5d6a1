package engine

import (
	"testing"

	"schedplay/engine/cpumask"
)

// Mechanism tests of era 6.12's EEVDF class (eevdf612.go; kernel/sched/
// fair.c of 6.12.117: dequeue_entity's DELAY_DEQUEUE, pick_next_entity,
// ttwu_runnable → requeue_delayed_entity, do_preempt_short, place_entity
// with PLACE_REL_DEADLINE and custom slices).

func sim612(t *testing.T, sets ...string) *Sim {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, append([]string{"era", "6.12"}, sets...)...)
	s.debug = true
	return s
}

// runsThenBlocks runs for run, then blocks until woken, then runs again.
func runsThenBlocks(run int64) Program {
	blocked := false
	return ProgramFunc(func(*Ctx) Action {
		blocked = !blocked
		if blocked {
			return Run(run)
		}
		return Block()
	})
}

// runUntil steps s until cond holds (or fails the test after limit).
func runUntil(t *testing.T, s *Sim, limit int64, cond func() bool) {
	t.Helper()
	for s.now < limit {
		if cond() {
			return
		}
		s.RunUntil(s.now + 10*Microsecond)
	}
	if !cond() {
		t.Fatalf("condition not reached by %d ns", limit)
	}
}

// A task that blocks while it is not eligible (it has run past V) stays
// queued, counted in nr_running; one that blocks while eligible leaves
// with its lag as in 6.6. The pick that chooses a delayed task later
// dequeues it for good with its lag clipped to 0 (DELAY_ZERO). With
// DELAY_DEQUEUE off nothing is delayed.
func TestDelayedTaskStaysQueuedUntilPicked(t *testing.T) {
	delayedRuns := 0
	for run := int64(500); run <= 12000; run += 500 {
		for _, dd := range []string{"1", "0"} {
			s, b := sleeperBesideHog(t, dd, run*Microsecond)
			c := s.cpus[0]
			switched := false
			var delayed, eligible bool
			var nr int
			s.hooks.OnSwitch = func(cpu int, prev, next *Task) {
				if prev == b && b.state == TaskBlocked && !switched {
					switched, delayed, nr = true, b.delayed, c.nr
					eligible = !delayed || s.entityEligible(c, b)
				}
			}
			runUntil(t, s, 100*Millisecond, func() bool { return switched })
			switch {
			case dd == "0" && (delayed || nr != 1):
				t.Fatalf("run %d us, NO_DELAY_DEQUEUE: delayed %v, nr_running %d; want a plain dequeue", run, delayed, nr)
			case delayed && (eligible || nr != 2):
				t.Fatalf("run %d us: delayed while eligible %v, nr_running %d", run, eligible, nr)
			case dd == "1" && !delayed && b.vlag < 0:
				t.Fatalf("run %d us, DELAY_DEQUEUE=%s: dequeued with negative lag %d", run, dd, b.vlag)
			}
			if !delayed {
				continue
			}
			delayedRuns++
			runUntil(t, s, 200*Millisecond, func() bool { return !b.delayed })
			if c.nr != 1 || b.vlag != 0 || s.stats.delayedFlushed != 1 || b.state != TaskBlocked {
				t.Fatalf("run %d us, after the pick: nr_running %d, b's lag %d, %d dequeued by a pick, b %s; want 1, 0, 1, blocked",
					run, c.nr, b.vlag, s.stats.delayedFlushed, b.state)
			}
		}
	}
	if delayedRuns == 0 {
		t.Fatal("no run length left b ineligible at its sleep")
	}
}

// sleeperBesideHog shares CPU 0 between a hog and b, which runs for run,
// sleeps until woken, and so on. b asks for a 10 ms slice, so RUN_TO_PARITY
// lets it run well past V before the tick reschedules it: a sleep in the
// second half of such a stint finds it ineligible.
func sleeperBesideHog(t *testing.T, dd string, run int64) (*Sim, *Task) {
	s := sim612(t, "DELAY_DEQUEUE", dd, "hz", "1000")
	w := s.AddWorkload("w", "test")
	spawnOn(t, s, w, "hog", 0, 0, hog())
	id, err := s.Spawn(w, TaskSpec{Name: "b", Allowed: cpumask.Of(2, 0), ParentCPU: 0, Program: runsThenBlocks(run), Slice: 10 * Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s, s.tasks[id]
}

// A delayed wakee is requeued where it is by ttwu_runnable: no
// select_task_rq (so no record_wakee: the waker's wakee_flips stay), the
// delayed_requeue stage, the wakee's CPU unchanged although the waker's
// CPU is idle and the wakee may run there. A fully dequeued wakee (DELAY_DEQUEUE
// off) goes through select_task_rq_fair.
func TestDelayedWakeeSkipsSelectTaskRq(t *testing.T) {
	run := delayingRun(t)
	for _, dd := range []string{"1", "0"} {
		s, b := sleeperBesideHog(t, dd, run)
		w := WorkloadID(0)
		runUntil(t, s, 50*Millisecond, func() bool { return b.state == TaskBlocked && b.sumExec > 0 })
		b.allowed = cpumask.Of(2, 0, 1) // the wakeup could move it to the idle CPU 1
		b.nrAllowed = 2
		if (dd == "1") != b.delayed {
			t.Fatalf("DELAY_DEQUEUE=%s: b delayed %v", dd, b.delayed)
		}
		woke := false
		waker := spawnOn(t, s, w, "waker", 1, 0, ProgramFunc(func(*Ctx) Action {
			if woke {
				return Block()
			}
			woke = true
			return Wake(b.ID, false)
		}))
		flips := waker.wakeeFlips
		var stage Stage = numStages
		s.hooks.OnWakeup = func(d *Decision) {
			if d.Task == b.ID {
				stage = d.Stage
			}
		}
		runUntil(t, s, 60*Millisecond, func() bool { return woke && b.state != TaskBlocked })
		switch dd {
		case "1":
			if stage != StageDelayed || b.cpu != 0 || waker.wakeeFlips != flips || b.delayed {
				t.Fatalf("delayed wakee: stage %v, on CPU %d, waker's flips %d→%d, still delayed %v; want delayed_requeue on 0, flips unchanged",
					stage, b.cpu, flips, waker.wakeeFlips, b.delayed)
			}
		case "0":
			if stage == StageDelayed || stage == numStages || waker.wakeeFlips == flips {
				t.Fatalf("plain wakee: stage %v, waker's flips %d→%d; want a select_task_rq_fair decision that records the wakee", stage, flips, waker.wakeeFlips)
			}
		}
	}
}

// curr612 makes a running task of c with the given vruntime, deadline and
// slice, protected by RUN_TO_PARITY (just picked).
func curr612(s *Sim, c *cpu, v, dl, slice int64) *Task {
	t := &Task{ID: TaskID(len(s.tasks)), Name: "curr", weight: 1024, state: TaskRunning, cpu: c.id,
		vruntime: v, deadline: dl, slice: slice, pickDeadline: dl, allowed: cpumask.Of(s.topo.NCPU, c.id),
		lastWakee: -1, recentUsedCPU: -1}
	s.tasks = append(s.tasks, t)
	c.curr = t
	c.nr++
	c.loadWeight += t.weight
	return t
}

// PREEMPT_SHORT: a wakee with a shorter slice cancels the protection
// RUN_TO_PARITY gives curr and preempts it; with PREEMPT_SHORT off (and in
// 6.6) the protected curr keeps the CPU.
func TestPreemptShortCancelsProtection(t *testing.T) {
	for _, ps := range []string{"1", "0"} {
		s := sim612(t, "PREEMPT_SHORT", ps)
		c := s.cpus[0]
		cur := curr612(s, c, 0, 2_000_000, s.baseSliceNS)
		p := queued(s, c, "short", 0, 0, 100_000)
		p.slice, p.customSlice = 100_000, 100_000
		got := s.checkPreemptWakeupEEVDF(c, p, false)
		if want := ps == "1"; got != want {
			t.Errorf("PREEMPT_SHORT=%s: preempt %v, want %v", ps, got, want)
		}
		if ps == "1" && protected(cur) {
			t.Errorf("PREEMPT_SHORT: curr still protected")
		}
	}
	s6, c6 := eevdfSim(t)
	curr612(s6, c6, 0, 2_000_000, s6.baseSliceNS)
	p := queued(s6, c6, "short", 0, 0, 100_000)
	p.slice = 100_000
	if s6.checkPreemptWakeupEEVDF(c6, p, false) {
		t.Errorf("6.6 preempted a protected curr for a shorter slice")
	}
}

// A custom slice (sched_attr.sched_runtime) sets the deadline at placement
// and survives update_deadline; the base slice is 6.12's 0.70 ms scaled
// by 1+ilog2(2) on this 2-CPU machine.
func TestCustomSliceSetsTheDeadline(t *testing.T) {
	s := sim612(t)
	if s.baseSliceNS != 1_400_000 {
		t.Fatalf("base slice %d ns, want 700 us × 2", s.baseSliceNS)
	}
	w := s.AddWorkload("w", "test")
	id, err := s.Spawn(w, TaskSpec{Name: "long", Allowed: cpumask.Of(2, 0), ParentCPU: 0, Program: hog(), Slice: 5 * Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	long := s.tasks[id]
	plain := spawnOn(t, s, w, "plain", 0, 0, hog())
	c := s.cpus[0]
	for _, tk := range []*Task{long, plain} {
		tk.vlag = 0
		if tk.state == TaskRunnable {
			s.treeRemove66(c, tk)
		}
		s.placeEntity(c, tk, false)
		if tk.state == TaskRunnable {
			s.treeInsert66(c, tk)
		}
	}
	if d := long.deadline - long.vruntime; d != calcDeltaFair(5*Millisecond, long.weight) {
		t.Errorf("custom slice: deadline - vruntime %d, want 5 ms", d)
	}
	if d := plain.deadline - plain.vruntime; d != calcDeltaFair(s.baseSliceNS, plain.weight) {
		t.Errorf("base slice: deadline - vruntime %d, want %d", d, s.baseSliceNS)
	}
	s.RunUntil(50 * Millisecond)
	if long.slice != 5*Millisecond {
		t.Errorf("after update_deadline: slice %d, want the custom 5 ms", long.slice)
	}
	if _, err := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.6").Spawn(0, TaskSpec{Name: "x", Program: hog(), Slice: Millisecond}); err == nil {
		t.Errorf("era 6.6 accepted a per-task slice")
	}
}

// PLACE_REL_DEADLINE: a task the balancer moves keeps deadline - vruntime
// across the move instead of a fresh slice; off, it gets a fresh slice.
func TestRelDeadlineSurvivesMigration(t *testing.T) {
	for _, rel := range []string{"1", "0"} {
		s := sim612(t, "PLACE_REL_DEADLINE", rel)
		src, dst := s.cpus[0], s.cpus[1]
		queued(s, src, "other", 0, 0, 5000)
		m := queued(s, src, "m", 0, 100, 100+300)
		m.allowed, m.srqShard = cpumask.Of(2, 0, 1), -1
		s.detachQueuedEEVDF(src, m, dst)
		s.attachQueuedEEVDF(dst, m, dst)
		got := m.deadline - m.vruntime
		want := int64(300)
		if rel == "0" {
			want = calcDeltaFair(s.baseSliceNS, m.weight)
		}
		if got != want || m.relDeadline {
			t.Errorf("PLACE_REL_DEADLINE=%s: deadline - vruntime %d (rel flag %v), want %d", rel, got, m.relDeadline, want)
		}
	}
}

// wake_up_new_task places a new task once, with ENQUEUE_INITIAL: half a
// slice to its first deadline (PLACE_DEADLINE_INITIAL), which 6.6's second
// placement undid.
func TestForkGetsHalfASlice(t *testing.T) {
	s := sim612(t)
	w := s.AddWorkload("w", "test")
	k := spawnOn(t, s, w, "k", 0, 0, hog())
	if d := k.deadline - k.vruntime; d != calcDeltaFair(s.baseSliceNS, k.weight)/2 {
		t.Errorf("new task: deadline - vruntime %d, want half of %d", d, s.baseSliceNS)
	}
}

// delayingRun finds a run length after which sleeperBesideHog's b goes
// to its first sleep ineligible, so delayed.
func delayingRun(t *testing.T) int64 {
	for run := 500 * Microsecond; run <= 12*Millisecond; run += 500 * Microsecond {
		s, b := sleeperBesideHog(t, "1", run)
		runUntil(t, s, 100*Millisecond, func() bool { return b.state == TaskBlocked && b.sumExec > 0 })
		if b.delayed {
			return run
		}
	}
	t.Fatal("no run length delays b")
	return 0
}

// NI_RANDOM: a newly idle balance runs a level with probability
// (2 + newidle_ratio)/1024; the ratio follows the level's weighted
// successes, halving its counts every 1024 calls.
func TestNewidleRandomSamplesLevels(t *testing.T) {
	var ds domState
	ds.niCall, ds.niSuccess, ds.niRatio = 1023, 100, 512
	updateNewidleStats(&ds, 4)
	if ds.niRatio != 104 || ds.niCall != 512 || ds.niSuccess != 52 {
		t.Fatalf("after the 1024th call: ratio %d calls %d successes %d, want 104 512 52", ds.niRatio, ds.niCall, ds.niSuccess)
	}
	for _, c := range []struct {
		ratio      int64
		lo, hi     float64 // share of levels balanced
		knobNIRand string
	}{{0, 0, 0.01, "1"}, {1023, 0.99, 1, "1"}, {512, 0.45, 0.55, "1"}, {0, 0.99, 1, "0"}} {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.12", "NI_RANDOM", c.knobNIRand)
		cp := s.cpus[0]
		s.overloaded = true
		cp.avgIdle = Second
		ran, n := 0, 2000
		for i := 0; i < n; i++ {
			cp.doms[0].niRatio, cp.doms[0].niCall = c.ratio, 0
			s.overloaded, cp.avgIdle = true, Second // as a busy machine would keep them
			before := s.stats.lbCalls
			s.newidleBalance66(cp, false)
			if s.stats.lbCalls > before {
				ran++
			}
		}
		if got := float64(ran) / float64(n); got < c.lo || got > c.hi {
			t.Errorf("NI_RANDOM=%s ratio %d: %.3f of passes balanced, want %.2f..%.2f", c.knobNIRand, c.ratio, got, c.lo, c.hi)
		}
	}
}
