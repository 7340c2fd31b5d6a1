package engine

import (
	"strings"
	"testing"

	"schedplay/engine/cpumask"
)

func spawnRT(t *testing.T, s *Sim, w WorkloadID, name string, parent int, allowed cpumask.Mask, pol Policy, prio int, p Program) *Task {
	t.Helper()
	nice := 0
	if pol == PolicyNormal {
		nice = 19
	}
	id, err := s.Spawn(w, TaskSpec{Name: name, Nice: nice, Allowed: allowed, ParentCPU: parent, Program: p, MeasureWakeups: true, Policy: pol, RTPrio: prio})
	if err != nil {
		t.Fatal(err)
	}
	return s.tasks[id]
}

// periodic runs for run and sleeps for sleep, forever.
func periodic(run, sleep int64) Program {
	step := 0
	return ProgramFunc(func(*Ctx) Action {
		step++
		if step%2 == 1 {
			return Run(run)
		}
		return Sleep(sleep)
	})
}

// An RT task waking on a CPU that runs a fair task stays there
// (select_task_rq_rt leaves it on its CPU unless that CPU runs RT work it
// cannot preempt) and preempts the fair task at once; the same task as a
// nice-19 fair one cannot preempt the hog (its wakeup granularity, scaled
// by its small weight, exceeds any vruntime lead) and waits for the tick.
func TestRTWakeupPreemptsFair(t *testing.T) {
	for _, era := range []string{"5.2", "6.6"} {
		run := func(pol Policy, prio int) (p99 int64, migrations int64) {
			s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", era, "IDLE_STATES", "false")
			s.debug = true
			w := s.AddWorkload("mix", "mix")
			spawnOn(t, s, w, "hog0", 0, 0, hog())
			spawnOn(t, s, w, "hog1", 1, 0, hog())
			rt := spawnRT(t, s, w, "rt", 0, cpumask.Mask{}, pol, prio, periodic(50*Microsecond, 2*Millisecond))
			s.RunUntil(2 * Second)
			return s.workloads[w].wakeLat.Summarize().P99, rt.migrations
		}
		rtP99, rtMig := run(PolicyFIFO, 50)
		fairP99, _ := run(PolicyNormal, 0)
		if rtP99 > 20 || rtMig != 0 {
			t.Errorf("era %s: SCHED_FIFO wakeups: p99 %d µs, %d migrations; want a few µs on its own CPU", era, rtP99, rtMig)
		}
		if fairP99 < 100 {
			t.Errorf("era %s: the same task as a nice-19 SCHED_OTHER one has p99 %d µs, want it to wait for a tick (>= 100 µs)", era, fairP99)
		}
	}
}

// find_lowest_rq: among the CPUs of the lowest cpupri level (here the two
// running fair tasks; the others run RT tasks), the task's own CPU first;
// otherwise this CPU when it is among them; otherwise the first of them
// (v5.2) or the next in turn (6.x's cpumask_any_and_distribute).
func TestFindLowestRQ(t *testing.T) {
	for _, c := range []struct {
		era        string
		prev, this int
		want       []int // successive calls
	}{
		{"5.2", 3, 0, []int{3, 3}},
		{"5.2", 1, 0, []int{2, 2, 2}},
		{"5.2", 1, 2, []int{2}},
		{"6.6", 3, 0, []int{3}},
		{"6.6", 1, 0, []int{2, 3, 2}},
		{"6.6", 1, 3, []int{3, 3}},
	} {
		s := newSim(t, smallSpec(1, 4, 1, 4, "interleaved"), 1, "era", c.era, "IDLE_STATES", "false")
		w := s.AddWorkload("mix", "mix")
		spawnRT(t, s, w, "rt50", 0, cpumaskOf(s, 0), PolicyFIFO, 50, hog())
		spawnRT(t, s, w, "rt10", 1, cpumaskOf(s, 1), PolicyFIFO, 10, hog())
		spawnOn(t, s, w, "fair2", 2, 0, hog())
		spawnOn(t, s, w, "fair3", 3, 0, hog())
		p := spawnRT(t, s, w, "p", 0, cpumask.Mask{}, PolicyFIFO, 30, ProgramFunc(func(*Ctx) Action { return Block() }))
		s.RunUntil(10 * Millisecond)
		if p.state != TaskBlocked {
			t.Fatalf("p is %v, want blocked", p.state)
		}
		p.cpu = c.prev
		s.cpus[c.this].distPrev = 0 // this CPU's distribute_cpu_mask_prev as at boot
		for i, want := range c.want {
			if got := s.findLowestRQ(p, c.this); got != want {
				t.Errorf("era %s, prev %d, this %d, call %d: find_lowest_rq = %d, want %d", c.era, c.prev, c.this, i, got, want)
			}
		}
		// A task above every CPU's level but one: only CPU 1 (RT 10)
		// and the fair CPUs are below 60; the fair ones are lowest.
		// A task at priority 5 finds nothing below it but the fair CPUs.
		p.rtPrio = 5
		if s.cpupriFind(p) != 0 {
			t.Errorf("era %s: cpupri_find for rt priority 5 = level %d, want 0 (the fair CPUs)", c.era, s.cpupriFind(p))
		}
	}
}

// A higher-priority RT task waking on the CPU of a lower one preempts it,
// and the preempted task is pushed to a CPU running only fair work
// (push_rt_task from set_next_task_rt's balance callback).
func TestRTPushMovesPreemptedTask(t *testing.T) {
	for _, era := range []string{"5.2", "6.6"} {
		s := newSim(t, smallSpec(1, 4, 1, 4, "interleaved"), 1, "era", era, "IDLE_STATES", "false")
		s.debug = true
		w := s.AddWorkload("mix", "mix")
		for cpu := 1; cpu < 4; cpu++ {
			spawnOn(t, s, w, "fair", cpu, 0, hog())
		}
		low := spawnRT(t, s, w, "low", 0, cpumask.Mask{}, PolicyFIFO, 40, hog())
		s.RunUntil(5 * Millisecond)
		if low.cpu != 0 || low.state != TaskRunning {
			t.Fatalf("era %s: low RT task %v on CPU %d, want running on 0", era, low.state, low.cpu)
		}
		high := spawnRT(t, s, w, "high", 0, cpumask.Mask{}, PolicyFIFO, 60, hog())
		s.RunUntil(10 * Millisecond)
		if high.cpu != 0 || high.state != TaskRunning {
			t.Errorf("era %s: high RT task %v on CPU %d, want running on CPU 0 (it preempts low there)", era, high.state, high.cpu)
		}
		if low.cpu == 0 || low.state != TaskRunning || s.rt.pushes != 1 {
			t.Errorf("era %s: low RT task %v on CPU %d after %d pushes, want pushed once to a fair CPU and running", era, low.state, low.cpu, s.rt.pushes)
		}
	}
}

// RT throttling: an RT hog beside a fair hog on one CPU leaves the fair
// one sched_rt_period_us - sched_rt_runtime_us (50 ms of every second).
// With RT_RUNTIME_SHARE (v5.2's default) the throttled CPU borrows the
// other CPU's unused RT runtime up to the whole period, and the fair task
// gets nothing; sched_rt_runtime_us = -1 turns throttling off.
func TestRTThrottling(t *testing.T) {
	for _, c := range []struct {
		sets       []string
		lo, hi     float64 // the fair hog's share of CPU 0
		throttling bool
	}{
		{[]string{"era", "6.6"}, 0.045, 0.055, true},
		{[]string{"era", "5.2", "RT_RUNTIME_SHARE", "false"}, 0.045, 0.055, true},
		{[]string{"era", "5.2"}, 0, 0.001, false},
		{[]string{"era", "6.6", "sched_rt_runtime_us", "-1"}, 0, 0.001, false},
	} {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, append(c.sets, "IDLE_STATES", "false")...)
		s.debug = true
		w := s.AddWorkload("mix", "mix")
		fair := spawnOn(t, s, w, "fair", 0, 0, hog())
		rt := spawnRT(t, s, w, "rt", 0, cpumaskOf(s, 0), PolicyFIFO, 50, hog())
		s.RunUntil(5 * Second)
		s.updateCurr(s.cpus[0])
		share := float64(fair.sumExec) / float64(fair.sumExec+rt.sumExec)
		if share < c.lo || share > c.hi || (s.rt.throttles > 0) != c.throttling {
			t.Errorf("%v: fair share %.4f after %d throttles, want %.3f..%.3f (throttling %v)", c.sets, share, s.rt.throttles, c.lo, c.hi, c.throttling)
		}
	}
}

// SCHED_RR tasks of one priority take turns every sched_rr_timeslice_ms;
// SCHED_FIFO ones do not: the first runs until it blocks.
func TestRRTimeslice(t *testing.T) {
	for _, c := range []struct {
		pol        Policy
		slice      string
		lo, hi     int64 // context switches in 1 s
		secondRuns bool
	}{
		{PolicyRR, "100", 9, 11, true},
		{PolicyRR, "10", 95, 105, true},
		{PolicyFIFO, "100", 0, 1, false},
	} {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.6", "IDLE_STATES", "false", "sched_rr_timeslice_ms", c.slice, "sched_rt_runtime_us", "-1")
		s.debug = true
		w := s.AddWorkload("rr", "rr")
		spawnRT(t, s, w, "a", 0, cpumaskOf(s, 0), c.pol, 10, hog())
		b := spawnRT(t, s, w, "b", 0, cpumaskOf(s, 0), c.pol, 10, hog())
		start := s.stats.ctxSwitches
		s.RunUntil(Second)
		n := s.stats.ctxSwitches - start
		if n < c.lo || n > c.hi || (b.sumExec > 0) != c.secondRuns {
			t.Errorf("%v slice %s ms: %d switches in 1 s, second task ran %d ns; want %d..%d switches (second runs: %v)", c.pol, c.slice, n, b.sumExec, c.lo, c.hi, c.secondRuns)
		}
	}
}

// An RT task's timer sleep has no slack (hrtimer_nanosleep).
func TestRTSleepHasNoSlack(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.6", "IDLE_STATES", "false", "timer_slack_ns", "50000")
	w := s.AddWorkload("rt", "rt")
	var woke []int64
	step := 0
	spawnRT(t, s, w, "rt", 0, cpumaskOf(s, 0), PolicyFIFO, 80, ProgramFunc(func(c *Ctx) Action {
		step++
		if step > 1 {
			woke = append(woke, c.Now())
		}
		return Sleep(Millisecond)
	}))
	s.RunUntil(20 * Millisecond)
	for i := 1; i < len(woke); i++ {
		if d := woke[i] - woke[i-1]; d >= Millisecond+50*Microsecond {
			t.Fatalf("RT sleep of 1 ms took %d ns between wakeups: timer slack applied", d)
		}
	}
	if len(woke) < 10 {
		t.Fatalf("only %d wakeups in 20 ms", len(woke))
	}
}

// An era without the RT class refuses an RT task by name, and bad
// priorities are refused.
func TestRTRefusals(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.6")
	w := s.AddWorkload("rt", "rt")
	for _, spec := range []TaskSpec{
		{Name: "a", Program: hog(), Policy: PolicyFIFO, RTPrio: 0},
		{Name: "b", Program: hog(), Policy: PolicyRR, RTPrio: 100},
		{Name: "c", Program: hog(), RTPrio: 5},
	} {
		if _, err := s.Spawn(w, spec); err == nil || !strings.Contains(err.Error(), "rt priority") {
			t.Errorf("%+v: %v, want an rt priority error", spec.Name, err)
		}
	}
}

// sched_yield of a SCHED_FIFO task puts it behind the other tasks of its
// priority (yield_task_rt): two yielding FIFO tasks on one CPU alternate.
func TestRTYieldAlternates(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.6", "IDLE_STATES", "false", "sched_rt_runtime_us", "-1")
	s.debug = true
	w := s.AddWorkload("y", "y")
	yielder := func() Program {
		n := 0
		return ProgramFunc(func(*Ctx) Action {
			n++
			if n%2 == 1 {
				return Run(100 * Microsecond)
			}
			return Action{Kind: ActYield}
		})
	}
	a := spawnRT(t, s, w, "a", 0, cpumaskOf(s, 0), PolicyFIFO, 10, yielder())
	b := spawnRT(t, s, w, "b", 0, cpumaskOf(s, 0), PolicyFIFO, 10, yielder())
	s.RunUntil(100 * Millisecond)
	if a.sumExec < 40*Millisecond || b.sumExec < 40*Millisecond {
		t.Fatalf("yielding FIFO tasks ran %d and %d ns of 100 ms, want about half each", a.sumExec, b.sumExec)
	}
}

// pull_rt_task: an RT task queued behind a higher one on CPU 1 moves to
// CPU 0 when CPU 0's RT task first sleeps (its priority drops), pushed by
// the overloaded CPU (RT_PUSH_IPI) or taken by CPU 0, exactly once: it
// then stays on CPU 0 (CPU 1 never runs anything below it) and runs the
// half of the time CPU 0's task sleeps. Without the pull it would wait
// behind CPU 1's hog for ever.
func TestRTPullWhenPriorityDrops(t *testing.T) {
	for _, ipi := range []string{"true", "false"} {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.6", "IDLE_STATES", "false", "sched_rt_runtime_us", "-1", "RT_PUSH_IPI", ipi)
		s.debug = true
		w := s.AddWorkload("rt", "rt")
		spawnRT(t, s, w, "high", 0, cpumaskOf(s, 0), PolicyFIFO, 60, periodic(5*Millisecond, 5*Millisecond))
		spawnRT(t, s, w, "hog", 1, cpumaskOf(s, 1), PolicyFIFO, 50, hog())
		s.RunUntil(Millisecond)
		low := spawnRT(t, s, w, "low", 1, cpumask.Mask{}, PolicyFIFO, 40, hog())
		s.RunUntil(Second)
		s.updateCurr(s.cpus[low.cpu])
		share := float64(low.sumExec) / float64(Second)
		moved := s.rt.pulls
		if ipi == "true" {
			moved = s.rt.pushes
		}
		t.Logf("RT_PUSH_IPI %s: share %.3f, pushes %d, pulls %d", ipi, share, s.rt.pushes, s.rt.pulls)
		if share < 0.45 || share > 0.55 || moved != 1 || s.rt.pushes+s.rt.pulls != 1 {
			t.Errorf("RT_PUSH_IPI %s: the queued RT task ran %.3f of the time (pushes %d, pulls %d); want about 0.5 after one move", ipi, share, s.rt.pushes, s.rt.pulls)
		}
	}
}

// Era 2.6-o1 keeps RT tasks in its own priority arrays (2.6.7
// kernel/sched.c): priority 99 - rt_priority with no sleep bonus, never
// expired, so a SCHED_FIFO hog leaves a fair hog on its CPU nothing; a
// woken RT task preempts even a nice -20 hog at once (TASK_PREEMPTS_CURR);
// SCHED_RR tasks of one priority take turns every task_timeslice (nice 0:
// 100 ms), not at sched_rr_timeslice_ms (a later sysctl).
func TestO1RT(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "2.6-o1", "IDLE_STATES", "false")
	s.debug = true
	w := s.AddWorkload("mix", "mix")
	fair := spawnOn(t, s, w, "fair", 0, 0, hog())
	rt := spawnRT(t, s, w, "fifo", 0, cpumaskOf(s, 0), PolicyFIFO, 50, hog())
	s.RunUntil(2 * Second)
	s.updateCurr(s.cpus[0])
	if rt.o1.prio != 49 || fair.sumExec > 10*Millisecond || rt.sumExec < 1900*Millisecond {
		t.Errorf("O(1) FIFO hog: prio %d, ran %d ns beside a fair hog that ran %d ns; want prio 49 and the fair hog starved", rt.o1.prio, rt.sumExec, fair.sumExec)
	}

	s = newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "2.6-o1", "IDLE_STATES", "false")
	w = s.AddWorkload("mix", "mix")
	spawnOn(t, s, w, "hog", 0, -20, hog())
	sleeper := spawnRT(t, s, w, "rt", 0, cpumaskOf(s, 0), PolicyFIFO, 10, periodic(50*Microsecond, 2*Millisecond))
	s.RunUntil(Second)
	if p99 := s.workloads[w].wakeLat.Summarize().P99; p99 > 20 || sleeper.wakeups < 400 {
		t.Errorf("O(1) RT sleeper beside a nice -20 hog: p99 %d µs over %d wakeups, want a few µs", p99, sleeper.wakeups)
	}

	s = newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "2.6-o1", "IDLE_STATES", "false")
	w = s.AddWorkload("rr", "rr")
	a := spawnRT(t, s, w, "a", 0, cpumaskOf(s, 0), PolicyRR, 10, hog())
	b := spawnRT(t, s, w, "b", 0, cpumaskOf(s, 0), PolicyRR, 10, hog())
	start := s.stats.ctxSwitches
	s.RunUntil(Second)
	s.updateCurr(s.cpus[0])
	if n := s.stats.ctxSwitches - start; n < 8 || n > 12 || a.sumExec < 400*Millisecond || b.sumExec < 400*Millisecond {
		t.Errorf("O(1) SCHED_RR pair: %d switches in 1 s, CPU %d and %d ns; want ~10 switches (100 ms slices) and half each", n, a.sumExec, b.sumExec)
	}
}
