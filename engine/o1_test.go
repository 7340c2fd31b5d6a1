package engine

import (
	"testing"

	"schedplay/engine/knob"
)

// Mechanism tests of era 2.6-o1 (o1.go, o1_balance.go), each against the
// Linux 2.6.7 kernel/sched.c rule it models.

func o1Sim(t *testing.T, cores, threads int, sets ...string) *Sim {
	t.Helper()
	s := newSim(t, smallSpec(1, cores, threads, cores, "interleaved"), 1, append([]string{"era", "2.6-o1", "IDLE_STATES", "false"}, sets...)...)
	s.debug = true
	return s
}

// sleeperProg sleeps sleep, then runs run, forever.
func sleeperProg(sleep, run int64) Program {
	slept := false
	return ProgramFunc(func(*Ctx) Action {
		slept = !slept
		if slept {
			return Sleep(sleep)
		}
		return Run(run)
	})
}

func share(s *Sim, a, b *Task) float64 {
	for _, c := range s.cpus {
		s.updateCurr(c)
	}
	return float64(a.sumExec) / float64(a.sumExec+b.sumExec)
}

// task_timeslice (BASE_TIMESLICE): MIN + (MAX-MIN)·(139-static_prio)/39
// ticks — 200 ms at nice -20, 102 ms at nice 0 (the "100 msecs" of the
// kernel comment), 10 ms at nice 19; the knobs move the bounds.
func TestO1TimeslicesPerNice(t *testing.T) {
	s := o1Sim(t, 1, 1)
	for nice, want := range map[int]int64{-20: 200, -10: 151, 0: 102, 10: 53, 19: 10} {
		if got := s.O1TimesliceOf(nice) / Millisecond; got != want {
			t.Errorf("nice %d: slice %d ms, want %d", nice, got, want)
		}
	}
	s = o1Sim(t, 1, 1, "min_timeslice_ms", "5", "max_timeslice_ms", "100")
	if got := s.O1TimesliceOf(19); got != 5*Millisecond {
		t.Errorf("min_timeslice_ms=5: nice 19 slice %d", got)
	}
	if got := s.O1TimesliceOf(0); got != 51*Millisecond {
		t.Errorf("max_timeslice_ms=100: nice 0 slice %d, want 51 ms", got)
	}

	// Two CPU hogs on one CPU share it by their slices: each array round
	// gives nice 0 102 ms and nice 19 10 ms (8.9%), unlike CFS's weights
	// (1024:15, 1.4%).
	s = o1Sim(t, 1, 1)
	w := s.AddWorkload("hogs", "hog")
	a := spawnOn(t, s, w, "nice0", 0, 0, hog())
	b := spawnOn(t, s, w, "nice19", 0, 19, hog())
	s.RunUntil(5 * Second)
	if got := 1 - share(s, a, b); got < 0.08 || got > 0.10 {
		t.Fatalf("nice 19 got %.3f of the CPU beside a nice 0 hog, want 10/112 ≈ 0.089", got)
	}
}

// schedule() switches the arrays when the active one is empty: a hog
// whose slice runs out goes to the expired array and waits there until
// every active task has used its slice.
func TestO1ExpiredArraySwitch(t *testing.T) {
	s := o1Sim(t, 1, 1)
	w := s.AddWorkload("hogs", "hog")
	a := spawnOn(t, s, w, "a", 0, 0, hog())
	b := spawnOn(t, s, w, "b", 0, 0, hog())
	s.RunUntil(50 * Millisecond)
	if act, exp := s.O1Arrays(0); act != 2 || exp != 0 || s.cpus[0].curr != a {
		t.Fatalf("at 50 ms: active %d expired %d, curr %v; want a running, both active", act, exp, s.cpus[0].curr.Name)
	}
	s.RunUntil(110 * Millisecond) // a expired at 102 ms
	if act, exp := s.O1Arrays(0); act != 1 || exp != 1 || s.cpus[0].curr != b {
		t.Fatalf("at 110 ms: active %d expired %d, curr %s; want b running, a expired", act, exp, s.cpus[0].curr.Name)
	}
	s.RunUntil(210 * Millisecond) // b expired at ~204 ms: switch
	if act, exp := s.O1Arrays(0); act != 2 || exp != 0 || s.cpus[0].curr != a {
		t.Fatalf("at 210 ms: active %d expired %d, curr %s; want the arrays switched and a running", act, exp, s.cpus[0].curr.Name)
	}
	if s.stats.o1Expiries != 2 {
		t.Fatalf("%d expiries, want 2", s.stats.o1Expiries)
	}
}

// scheduler_tick: an expiring TASK_INTERACTIVE task is reinserted into
// the active array, unless EXPIRED_STARVING — the first expired task has
// waited STARVATION_LIMIT × nr_running + 1 ticks, or a better static
// priority has expired.
func TestO1InteractiveReinsertionAndStarvation(t *testing.T) {
	setup := func(sets ...string) (*Sim, *Task) {
		s := o1Sim(t, 1, 1, sets...)
		w := s.AddWorkload("hogs", "hog")
		a := spawnOn(t, s, w, "a", 0, 0, hog())
		spawnOn(t, s, w, "b", 0, 0, hog())
		s.RunUntil(5 * Millisecond)
		if s.cpus[0].curr != a {
			t.Fatal("a is not running")
		}
		s.now += 5 * Second // jiffies well past 0 for expired_timestamp arithmetic
		// a has slept a lot: full sleep_avg, dynamic priority 115.
		s.o1Dequeue(a)
		a.o1.sleepAvg = s.o1NSMaxSleepAvg()
		a.o1.prio = s.o1EffectivePrio(a)
		s.o1Enqueue(s.cpus[0], a, false, true)
		a.o1.timeSlice = 1
		return s, a
	}
	s, a := setup()
	if a.o1.prio != 115 || !o1Interactive(a) {
		t.Fatalf("full sleep_avg: prio %d interactive %t, want 115 and interactive", a.o1.prio, o1Interactive(a))
	}
	c := s.cpus[0]
	if !s.o1Tick(c) || a.o1.arr != c.o1.active || a.o1.timeSlice != 102 {
		t.Fatalf("interactive expiry: array %d (active %d), slice %d; want reinserted into the active array with a new 102-tick slice", a.o1.arr, c.o1.active, a.o1.timeSlice)
	}

	// Starving: the expired array has waited 1020·2+1 ticks.
	s, a = setup()
	c = s.cpus[0]
	c.o1.expiredAt = s.jiffies() - (s.o1StarvationLimit()*int64(c.nr) + 1)
	if lim := s.o1StarvationLimit(); lim != 1020 {
		t.Fatalf("STARVATION_LIMIT %d ticks, want MAX_SLEEP_AVG = 1020", lim)
	}
	if !s.o1Tick(c) || a.o1.arr == c.o1.active {
		t.Fatal("starving expired array: the interactive task was reinserted anyway")
	}
	// One tick less is not starving yet.
	s, a = setup()
	c = s.cpus[0]
	c.o1.expiredAt = s.jiffies() - s.o1StarvationLimit()*int64(c.nr)
	if s.o1Tick(c); a.o1.arr != c.o1.active {
		t.Fatal("one tick short of the limit: the interactive task went to the expired array")
	}
	// A better static priority already expired.
	s, a = setup()
	c = s.cpus[0]
	c.o1.bestExpiredPrio = 119
	if s.o1Tick(c); a.o1.arr == c.o1.active {
		t.Fatal("a nice -1 task has expired: the nice 0 interactive task must expire too")
	}
	// starvation_limit_ms=0 turns the time limit off.
	s, a = setup("starvation_limit_ms", "0")
	c = s.cpus[0]
	c.o1.expiredAt = 0
	s.now += 10 * Second
	if s.o1Tick(c); a.o1.arr != c.o1.active {
		t.Fatal("starvation_limit_ms=0: the interactive task expired")
	}
}

// try_to_wake_up: TASK_PREEMPTS_CURR — the wakee preempts when its
// dynamic priority is better than curr's. A nice 0 sleeper (bonus up to
// +5) preempts a nice 0 hog at once; a nice 19 sleeper (prio ≥ 134) never
// preempts the hog (125) and waits for the hog's slice to run out.
func TestO1WakeupPreemptionByPriority(t *testing.T) {
	for _, c := range []struct {
		nice    int
		preempt bool
	}{{0, true}, {19, false}} {
		s := o1Sim(t, 1, 1)
		w := s.AddWorkload("mix", "mix")
		spawnOn(t, s, w, "hog", 0, 0, hog())
		sl := spawnOn(t, s, w, "sleeper", 0, c.nice, sleeperProg(50*Millisecond, Millisecond))
		s.RunUntil(3 * Second)
		lat := s.workloads[w].wakeLat
		p50 := lat.Percentile(50)
		if c.preempt && p50 > 100 {
			t.Errorf("nice 0 sleeper: median wakeup latency %d us, want an immediate preemption (prio %d vs hog %d)", p50, sl.o1.prio, s.tasks[0].o1.prio)
		}
		if !c.preempt && p50 < 1000 {
			t.Errorf("nice 19 sleeper: median wakeup latency %d us, want it to wait for the hog's slice", p50)
		}
	}
}

// SMT nice under the O(1) era reads the real time slice left: a nice 0
// task holds a nice 19 sibling until its slice left × 85/100 is no longer
// above 10 ticks, i.e. for its first 90 of 102 ms, so the nice 19 hog
// runs ~12 ms per 102; without SMT_NICE it runs all the time.
func TestO1SMTNiceUsesTheRealSlice(t *testing.T) {
	s := o1Sim(t, 1, 2)
	hi, lo := &Task{mm: 1}, &Task{mm: 2}
	hi.o1.staticPrio, lo.o1.staticPrio = 120, 139
	for left, held := range map[int64]bool{102: true, 13: true, 12: false, 1: false} {
		hi.o1.timeSlice = left
		if got := s.smtNiceHolds(hi, lo); got != held {
			t.Errorf("slice left %d ticks: held %t, want %t", left, got, held)
		}
	}
	if s.smtNiceHolds(lo, hi) {
		t.Error("a nice 19 task must never hold a nice 0 one")
	}
	for _, on := range []bool{true, false} {
		sets := []string{}
		if !on {
			sets = []string{"SMT_NICE", "false"}
		}
		s := o1Sim(t, 1, 2, sets...)
		w := s.AddWorkload("hogs", "hog")
		spawnOn(t, s, w, "nice0", 0, 0, hog())
		low := spawnOn(t, s, w, "nice19", 1, 19, hog())
		s.RunUntil(3 * Second)
		s.updateCurr(s.cpus[1])
		got := float64(low.sumExec) / float64(s.now)
		if on && (got < 0.09 || got > 0.15) {
			t.Errorf("SMT_NICE on: nice 19 sibling ran %.3f of the time, want ~12/102", got)
		}
		if !on && got < 0.99 {
			t.Errorf("SMT_NICE off: nice 19 sibling ran %.3f of the time, want all of it", got)
		}
	}
}

// o1Forker is a parent that forks a child running run, waits for its exit
// (the child wakes it), and does it again: the compile's process chain in
// small.
func o1Forker(run int64) Program {
	var child TaskID = -1
	return ProgramFunc(func(ctx *Ctx) Action {
		if child >= 0 && !ctx.Exited(child) {
			return Block()
		}
		self := ctx.Self()
		step := 0
		id, err := ctx.Spawn(TaskSpec{Name: "child", Program: ProgramFunc(func(*Ctx) Action {
			step++
			switch step {
			case 1:
				return Run(run)
			case 2:
				return Wake(self, false)
			}
			return Exit()
		})})
		if err != nil {
			panic(err)
		}
		child = id
		return Run(100 * Microsecond)
	})
}

// sched_fork gives the child the larger half of the parent's slice left;
// wake_up_forked_process queues it on the parent's CPU ahead of the
// parent, at the parent's priority.
func TestO1ForkSplitsTheSlice(t *testing.T) {
	s := o1Sim(t, 1, 1)
	w := s.AddWorkload("f", "fork")
	var child *Task
	parentProg := ProgramFunc(func(ctx *Ctx) Action {
		if child == nil {
			id, err := ctx.Spawn(TaskSpec{Name: "child", Program: hog()})
			if err != nil {
				t.Fatal(err)
			}
			child = s.tasks[id]
		}
		return Run(1 << 40)
	})
	p := spawnOn(t, s, w, "parent", 0, 0, parentProg)
	s.RunUntil(20 * Millisecond)
	if child == nil {
		t.Fatal("no child")
	}
	if child.o1.parent != p.ID || child.o1.prio != p.o1.prio && child.state == TaskRunnable {
		t.Fatalf("child prio %d parent %d", child.o1.prio, p.o1.prio)
	}
	// The parent had its full 102 ticks: the child got 51 and has not
	// run yet (no preemption check at fork); the parent runs on its 51.
	if child.o1.timeSlice != 51 || child.sumExec != 0 || p.o1.timeSlice > 51-19 {
		t.Fatalf("child slice %d ticks (ran %d), parent %d; want 51 each, the parent's counting down", child.o1.timeSlice, child.sumExec, p.o1.timeSlice)
	}
	q := s.cpus[0].o1.activeArr().queue[p.o1.prio]
	if len(q) != 2 || q[0] != child || q[1] != p {
		t.Fatalf("list %v: want the child just ahead of the parent", q)
	}
}

// Same seed, same run; the invariant checker (Debug) holds throughout:
// every queued task and curr on exactly one array of their CPU, bitmaps
// and counts consistent.
func TestO1DeterministicWithInvariants(t *testing.T) {
	run := func() (int64, []int64) {
		s := newSim(t, smallSpec(1, 1, 2, 1, "interleaved"), 7, "era", "2.6-o1")
		s.debug = true
		w := s.AddWorkload("mix", "mix")
		for i := 0; i < 3; i++ {
			if _, err := s.Spawn(w, TaskSpec{Name: "forker", Program: o1Forker(int64(i+3) * Millisecond)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Spawn(w, TaskSpec{Name: "hog19", Nice: 19, Program: hog()}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Spawn(w, TaskSpec{Name: "sleeper", Nice: 5, Program: sleeperProg(7*Millisecond, 2*Millisecond), MeasureWakeups: true}); err != nil {
			t.Fatal(err)
		}
		s.RunUntil(2 * Second)
		var ex []int64
		for _, c := range s.cpus {
			s.updateCurr(c)
		}
		for _, tk := range s.tasks {
			ex = append(ex, tk.sumExec, int64(tk.o1.prio), tk.o1.sleepAvg)
		}
		return s.Events(), ex
	}
	e1, x1 := run()
	e2, x2 := run()
	if e1 != e2 || len(x1) != len(x2) {
		t.Fatalf("events %d vs %d, %d vs %d values", e1, e2, len(x1), len(x2))
	}
	for i := range x1 {
		if x1[i] != x2[i] {
			t.Fatalf("value %d differs: %d vs %d", i, x1[i], x2[i])
		}
	}
	if len(x1) < 3*20 {
		t.Fatalf("only %d tasks: the forkers did not run", len(x1)/3)
	}
}

// 2.6.7's wake_idle (SD_WAKE_IDLE on the SMT domain): a task woken onto a
// busy CPU goes to its idle sibling instead.
func TestO1WakeIdleSibling(t *testing.T) {
	s := o1Sim(t, 1, 2)
	w := s.AddWorkload("mix", "mix")
	spawnOn(t, s, w, "hog", 0, 0, hog())
	sl, err := s.Spawn(w, TaskSpec{Name: "sleeper", ParentCPU: 0, Program: sleeperProg(20*Millisecond, Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	var stages [numStages]int
	s.SetHooks(Hooks{OnWakeup: func(d *Decision) {
		if d.Task == sl {
			stages[d.Stage]++
		}
	}})
	s.RunUntil(Second)
	if stages[StageIdleSMT]+stages[StageTarget] == 0 || stages[StageBusyTarget] > 0 {
		t.Fatalf("stages %v: want every wakeup on an idle CPU", stages)
	}
	if got := s.tasks[sl].cpu; got != 1 {
		t.Fatalf("sleeper on cpu %d, want the idle sibling 1", got)
	}
}

// The O(1) tunables exist only in era 2.6-o1: other eras refuse them by
// name.
func TestO1KnobsOnlyInTheirEra(t *testing.T) {
	for _, name := range []string{"min_timeslice_ms", "max_timeslice_ms", "starvation_limit_ms"} {
		k := knob.Defaults()
		if err := k.Set(name, "5"); err == nil {
			t.Errorf("era 5.2 accepted %s", name)
		}
		k66 := knob.Defaults()
		if err := k66.Set("era", "6.6"); err != nil {
			t.Fatal(err)
		}
		if err := k66.Set(name, "5"); err == nil {
			t.Errorf("era 6.6 accepted %s", name)
		}
		ko := knob.Defaults()
		if err := ko.Set("era", "2.6-o1"); err != nil {
			t.Fatal(err)
		}
		if err := ko.Set(name, "5"); err != nil {
			t.Errorf("era 2.6-o1 refused %s: %v", name, err)
		}
	}
	if d := knob.DefaultsFor(knob.EraO1); !d.On(knob.SMT_NICE) {
		t.Error("SMT_NICE is not on by default in era 2.6-o1 (2.6.7 builds dependent_sleeper in)")
	}
}

// The era keeps the engine's zero allocation per event once its lists
// have grown: a warmed-up run of hogs and sleepers allocates nothing.
func TestO1StepsDoNotAllocate(t *testing.T) {
	s := newSim(t, smallSpec(1, 1, 2, 1, "interleaved"), 3, "era", "2.6-o1")
	w := s.AddWorkload("mix", "mix")
	for i := 0; i < 3; i++ {
		spawnOn(t, s, w, "hog", i%2, 5*i, hog())
	}
	for i := 0; i < 3; i++ {
		if _, err := s.Spawn(w, TaskSpec{Name: "sleeper", Nice: i, Program: sleeperProg(int64(3+i)*Millisecond, Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	s.RunUntil(2 * Second)
	until := s.now
	allocs := testing.AllocsPerRun(5, func() {
		until += 200 * Millisecond
		s.RunUntil(until)
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per 200 ms of simulation, want 0", allocs)
	}
}
