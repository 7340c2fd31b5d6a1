package engine

import (
	"strings"
	"testing"

	"schedplay/engine/cpumask"
)

func spawnDL(t *testing.T, s *Sim, w WorkloadID, name string, parent int, allowed cpumask.Mask, dl DLParams, p Program) *Task {
	t.Helper()
	id, err := s.Spawn(w, TaskSpec{Name: name, Allowed: allowed, ParentCPU: parent, Program: p, MeasureWakeups: true, Policy: PolicyDeadline, DL: dl})
	if err != nil {
		t.Fatal(err)
	}
	return s.tasks[id]
}

// everyPeriod runs for run at the start of every period (an absolute
// timer, as rt-app's "timer" event and cyclictest keep it: a job that
// ends late starts the next one at once), forever.
func everyPeriod(run, period int64) Program {
	next := int64(-1)
	step := 0
	return ProgramFunc(func(c *Ctx) Action {
		step++
		if step%2 == 1 {
			if next < 0 {
				next = c.Now()
			}
			next += period
			return Run(run)
		}
		c.EndJob()
		if d := next - c.Now(); d > 0 {
			return Sleep(d)
		}
		step++ // late: the next job starts now
		next += period
		return Run(run)
	})
}

func dlParams(runtime, deadline, period int64, reclaim bool) DLParams {
	return DLParams{Runtime: runtime, Deadline: deadline, Period: period, Reclaim: reclaim}
}

// Admitted deadline tasks meet every deadline beside fair hogs that keep
// every CPU busy: EDF runs them first and the fair hogs get the rest.
func TestDLAdmittedMeetDeadlines(t *testing.T) {
	for _, era := range []string{"5.2", "6.1", "6.6"} {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", era, "IDLE_STATES", "false")
		s.debug = true
		w := s.AddWorkload("mix", "mix")
		for cpu := 0; cpu < 2; cpu++ {
			spawnOn(t, s, w, "hog", cpu, 0, hog())
		}
		// 3 tasks of 30%, 25% and 20%: 0.75 of the 1.9 CPUs allowed.
		a := spawnDL(t, s, w, "a", 0, cpumask.Mask{}, dlParams(3*Millisecond, 0, 10*Millisecond, false), everyPeriod(2*Millisecond, 10*Millisecond))
		b := spawnDL(t, s, w, "b", 0, cpumask.Mask{}, dlParams(5*Millisecond, 20*Millisecond, 20*Millisecond, false), everyPeriod(4*Millisecond, 20*Millisecond))
		c := spawnDL(t, s, w, "c", 1, cpumask.Mask{}, dlParams(2*Millisecond, 7*Millisecond, 10*Millisecond, false), everyPeriod(Millisecond, 10*Millisecond))
		s.RunUntil(Second)
		st := s.DL()
		if len(st.Tasks) != 3 {
			t.Fatalf("era %s: %d deadline tasks in DL(), want 3", era, len(st.Tasks))
		}
		for i, task := range []*Task{a, b, c} {
			ts := st.Tasks[i]
			if ts.Jobs < 45 || ts.Misses != 0 || ts.Throttles != 0 {
				t.Errorf("era %s: %s: %d jobs, %d misses, %d throttles; want every job on time", era, task.Name, ts.Jobs, ts.Misses, ts.Throttles)
			}
		}
		if got := st.Tasks[1].Share; got < 0.19 || got > 0.21 {
			t.Errorf("era %s: b ran %.3f of a CPU, want its 4 ms per 20 ms (0.20)", era, got)
		}
		if st.TotalBW < 0.749 || st.TotalBW > 0.751 || st.LimitBW < 1.899 || st.LimitBW > 1.901 {
			t.Errorf("era %s: total_bw %.3f, limit %.3f CPUs; want 0.75 of 1.9", era, st.TotalBW, st.LimitBW)
		}
	}
}

// Admission control refuses a task that would take the reserved
// bandwidth past sched_rt_runtime_us/sched_rt_period_us of every CPU, and
// leaves the admitted ones as they were.
func TestDLAdmissionRefusesOverSubscription(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.6", "IDLE_STATES", "false")
	w := s.AddWorkload("dl", "dl")
	half := dlParams(5*Millisecond, 0, 10*Millisecond, false)
	for i := 0; i < 3; i++ {
		spawnDL(t, s, w, "half", 0, cpumask.Mask{}, half, hog())
	}
	_, err := s.Spawn(w, TaskSpec{Name: "fourth", Program: hog(), Policy: PolicyDeadline, DL: half})
	if err == nil || !strings.Contains(err.Error(), "admission refused") || !strings.Contains(err.Error(), "fourth") {
		t.Fatalf("a fourth 50%% task on 2 CPUs (limit 1.9): err %v, want an admission refusal naming the task", err)
	}
	if got := s.DL().TotalBW; got < 1.499 || got > 1.501 {
		t.Errorf("after the refusal total_bw is %.3f CPUs, want the 1.5 admitted", got)
	}
	// A small one still fits.
	spawnDL(t, s, w, "small", 0, cpumask.Mask{}, dlParams(Millisecond, 0, 10*Millisecond, false), hog())
	// sched_rt_runtime_us = -1 lifts the limit.
	s2 := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.6", "IDLE_STATES", "false", "sched_rt_runtime_us", "-1")
	w2 := s2.AddWorkload("dl", "dl")
	for i := 0; i < 4; i++ {
		spawnDL(t, s2, w2, "half", 0, cpumask.Mask{}, half, hog())
	}
	for _, bad := range []DLParams{
		{Runtime: 5 * Millisecond, Period: 4 * Millisecond},
		{Runtime: 500, Period: Millisecond},
		{Runtime: Millisecond},
		{Runtime: Millisecond, Deadline: 2 * Millisecond, Period: Millisecond},
		{Runtime: 10 * Microsecond, Period: 50 * Microsecond}, // below sched_deadline_period_min_us
	} {
		if _, err := s2.Spawn(w2, TaskSpec{Name: "bad", Program: hog(), Policy: PolicyDeadline, DL: bad}); err == nil {
			t.Errorf("parameters %+v accepted, want __checkparam_dl's refusal", bad)
		}
	}
	o1 := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "2.6-o1")
	if _, err := o1.Spawn(o1.AddWorkload("dl", "dl"), TaskSpec{Name: "x", Program: hog(), Policy: PolicyDeadline, DL: half}); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("era 2.6-o1 accepted a deadline task: %v", err)
	}
}

// The CBS isolates: a deadline task that would run all the time gets its
// reservation and no more (throttled at each period's runtime), and the
// fair hog on its CPU gets the rest.
func TestDLThrottlesOverrun(t *testing.T) {
	for _, era := range []string{"5.2", "6.6"} {
		s := newSim(t, smallSpec(1, 1, 1, 1, "interleaved"), 1, "era", era, "IDLE_STATES", "false")
		s.debug = true
		w := s.AddWorkload("mix", "mix")
		fair := spawnOn(t, s, w, "hog", 0, 0, hog())
		spawnDL(t, s, w, "greedy", 0, cpumask.Mask{}, dlParams(10*Millisecond, 0, 100*Millisecond, false), hog())
		s.RunUntil(2 * Second)
		st := s.DL().Tasks[0]
		// Enforced at the tick (HRTICK off): up to a tick of overrun per
		// period, paid back from the next one.
		if st.Share < 0.095 || st.Share > 0.105 || st.Throttles < 19 {
			t.Errorf("era %s: greedy got %.3f of the CPU with %d throttles, want its 0.10", era, st.Share, st.Throttles)
		}
		if got := float64(fair.sumExec) / float64(s.now); got < 0.89 {
			t.Errorf("era %s: the fair hog got %.3f of the CPU, want the other 0.90", era, got)
		}
	}
}

// EDF: of two deadline tasks queued on one CPU, the one with the earlier
// absolute deadline runs first, and a woken task with an earlier deadline
// preempts a running one with a later deadline.
func TestDLEarliestDeadlineFirst(t *testing.T) {
	s := newSim(t, smallSpec(1, 1, 1, 1, "interleaved"), 1, "era", "6.6", "IDLE_STATES", "false")
	s.debug = true
	w := s.AddWorkload("dl", "dl")
	long := spawnDL(t, s, w, "long", 0, cpumask.Mask{}, dlParams(40*Millisecond, 100*Millisecond, 100*Millisecond, false), everyPeriod(30*Millisecond, 100*Millisecond))
	short := spawnDL(t, s, w, "short", 0, cpumask.Mask{}, dlParams(2*Millisecond, 5*Millisecond, 50*Millisecond, false), everyPeriod(Millisecond, 50*Millisecond))
	s.RunUntil(Second)
	st := s.DL()
	if st.Tasks[1].Misses != 0 || st.Tasks[0].Misses != 0 {
		t.Errorf("misses: long %d, short %d; want none (EDF keeps both)", st.Tasks[0].Misses, st.Tasks[1].Misses)
	}
	// short wakes every 50 ms inside long's 30 ms job (deadline 100 ms
	// out, short's 5 ms): it must preempt, so its wakeup latency stays
	// far below long's job.
	if p99 := s.workloads[w].wakeLat.Summarize().P99; p99 > 100 {
		t.Errorf("wakeup p99 %d µs: short waited behind long, want preemption at once", p99)
	}
	if long.sumExec < 280*Millisecond || short.sumExec < 19*Millisecond {
		t.Errorf("long ran %d ms, short %d ms; want 300 and 20", long.sumExec/Millisecond, short.sumExec/Millisecond)
	}
}

// select_task_rq_dl: a deadline task waking on a CPU whose deadline curr
// it cannot preempt goes where find_later_rq says: a CPU without deadline
// tasks (cpudl's free_cpus), its own CPU first when free; with deadline
// work everywhere, the CPU whose earliest deadline is latest. (Deadline
// tasks cannot be pinned: the hogs land where fork balancing puts them.)
func TestDLFindLaterRQ(t *testing.T) {
	for _, era := range []string{"5.2", "6.6"} {
		s := newSim(t, smallSpec(1, 4, 1, 4, "interleaved"), 1, "era", era, "IDLE_STATES", "false")
		w := s.AddWorkload("dl", "dl")
		a := spawnDL(t, s, w, "early-a", 0, cpumask.Mask{}, dlParams(9*Millisecond, 10*Millisecond, 10*Millisecond, false), hog())
		b := spawnDL(t, s, w, "early-b", 1, cpumask.Mask{}, dlParams(9*Millisecond, 10*Millisecond, 10*Millisecond, false), hog())
		p := spawnDL(t, s, w, "p", 0, cpumask.Mask{}, dlParams(Millisecond, 100*Millisecond, 100*Millisecond, false), ProgramFunc(func(*Ctx) Action { return Block() }))
		s.RunUntil(5 * Millisecond)
		if p.state != TaskBlocked || a.cpu == b.cpu {
			t.Fatalf("era %s: p is %v, the hogs on CPUs %d and %d; want p blocked and the hogs apart", era, p.state, a.cpu, b.cpu)
		}
		var free []int
		for _, c := range s.cpus {
			if len(c.dl.tree) == 0 {
				free = append(free, c.id)
			}
		}
		p.cpu = a.cpu
		if got := s.findLaterRQ(p, a.cpu); got != free[0] && got != free[1] {
			t.Errorf("era %s: find_later_rq from CPU %d = %d, want a CPU without deadline tasks %v", era, a.cpu, got, free)
		}
		p.cpu = free[1]
		if got := s.findLaterRQ(p, a.cpu); got != free[1] {
			t.Errorf("era %s: find_later_rq with prev %d (free) = %d, want it", era, free[1], got)
		}
		late := spawnDL(t, s, w, "late", free[0], cpumask.Mask{}, dlParams(400*Millisecond, 500*Millisecond, 500*Millisecond, false), hog())
		spawnDL(t, s, w, "mid", free[1], cpumask.Mask{}, dlParams(40*Millisecond, 50*Millisecond, 50*Millisecond, false), hog())
		s.RunUntil(8 * Millisecond)
		for _, c := range s.cpus {
			if len(c.dl.tree) != 1 {
				t.Fatalf("era %s: cpu %d has %d deadline tasks, want one each", era, c.id, len(c.dl.tree))
			}
		}
		p.dlse.deadline = s.now + 100*Millisecond
		if got := s.findLaterRQ(p, a.cpu); got != late.cpu {
			t.Errorf("era %s: find_later_rq with every CPU busy = %d, want %d (the latest deadline)", era, got, late.cpu)
		}
		// select_task_rq_dl's decision says that find_later_rq was asked
		// and what it answered (the decision panel's dl_prev rows).
		cur := s.cpus[a.cpu].curr
		d := *s.selectTaskRqDL(p, a.cpu, cur, false)
		if !d.DLFind || d.DLLater != late.cpu || d.Stage != StageDLLater || d.Chosen != late.cpu {
			t.Errorf("era %s: decision DLFind %v DLLater %d stage %s chosen %d, want find_later_rq asked and CPU %d taken", era, d.DLFind, d.DLLater, d.Stage, d.Chosen, late.cpu)
		}
		p.dlse.deadline = s.now + 600*Millisecond
		if got := s.findLaterRQ(p, a.cpu); got != -1 {
			t.Errorf("era %s: find_later_rq for a deadline later than every CPU's = %d, want none", era, got)
		}
		p.cpu = a.cpu
		d = *s.selectTaskRqDL(p, a.cpu, cur, false)
		if !d.DLFind || d.DLLater != -1 || d.Stage != StageDLPrev || d.Chosen != a.cpu {
			t.Errorf("era %s: decision DLFind %v DLLater %d stage %s chosen %d, want find_later_rq asked, none found, prev %d kept", era, d.DLFind, d.DLLater, d.Stage, d.Chosen, a.cpu)
		}
		p.dlse.deadline = s.now + Millisecond // earlier than a's: preempts it
		d = *s.selectTaskRqDL(p, a.cpu, cur, false)
		if d.DLFind || d.Stage != StageDLPrev || d.Chosen != a.cpu {
			t.Errorf("era %s: decision DLFind %v stage %s chosen %d, want prev %d kept without find_later_rq", era, d.DLFind, d.Stage, d.Chosen, a.cpu)
		}
	}
}

// A deadline task woken on a CPU whose deadline curr has an earlier
// deadline is pushed to a free CPU at once (task_woken_dl's push), and a
// CPU whose deadline task blocks pulls a waiting one (pull_dl_task).
func TestDLPushPull(t *testing.T) {
	for _, era := range []string{"5.2", "6.6"} {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", era, "IDLE_STATES", "false")
		s.debug = true
		w := s.AddWorkload("dl", "dl")
		// Two tasks that run 4 ms every 10 ms (deadline 5 ms), and a
		// fair hog on each CPU.
		for cpu := 0; cpu < 2; cpu++ {
			spawnOn(t, s, w, "hog", cpu, 0, hog())
		}
		for i := 0; i < 3; i++ {
			spawnDL(t, s, w, "dl", 0, cpumask.Mask{}, dlParams(4*Millisecond, 5*Millisecond, 10*Millisecond, false), everyPeriod(3*Millisecond, 10*Millisecond))
		}
		s.RunUntil(Second)
		st := s.DL()
		if st.Pushes+st.Pulls == 0 {
			t.Errorf("era %s: no pushes or pulls among 3 deadline tasks on 2 CPUs", era)
		}
		var misses int64
		for _, ts := range st.Tasks {
			misses += ts.Misses
		}
		// 3 × 3 ms per 10 ms with 5 ms deadlines on 2 CPUs: the first
		// jobs all wake at once and the third, pulled when one ends at
		// 3 ms, misses its 5 ms; that shifts its period, and from then
		// on the pull keeps every job on time.
		if misses > 3 || st.Pulls < 90 {
			t.Errorf("era %s: %d of ~300 jobs missed, %d pulls; want the first only, and a pull a period", era, misses, st.Pulls)
		}
	}
}

// GRUB: a reclaiming task whose jobs need 15 ms in a 12 ms / 100 ms
// reservation runs them out on an otherwise idle machine (its runtime
// runs down at about u/Umax = 0.126 of the time it runs), where the same
// task without SCHED_FLAG_RECLAIM is held to 12% and misses its deadlines
// (rt-app's deadline_reclaim-1 and deadline_no_reclaim-1 examples).
func TestDLGrubReclaims(t *testing.T) {
	for _, era := range []string{"5.2", "6.1", "6.6"} {
		run := func(reclaim bool) DLTaskStats {
			s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", era, "IDLE_STATES", "false")
			s.debug = true
			w := s.AddWorkload("dl", "dl")
			spawnDL(t, s, w, "thread0", 0, cpumask.Mask{}, dlParams(12*Millisecond, 0, 100*Millisecond, reclaim), everyPeriod(15*Millisecond, 100*Millisecond))
			s.RunUntil(2 * Second)
			return s.DL().Tasks[0]
		}
		with, without := run(true), run(false)
		if with.Share < 0.148 || with.Share > 0.152 || with.Misses != 0 || with.Throttles != 0 {
			t.Errorf("era %s: reclaiming: share %.3f, %d misses, %d throttles; want 0.15 and none", era, with.Share, with.Misses, with.Throttles)
		}
		if without.Share < 0.115 || without.Share > 0.125 || without.Misses < 15 {
			t.Errorf("era %s: not reclaiming: share %.3f, %d misses; want 0.12 and most jobs late", era, without.Share, without.Misses)
		}
	}
}

// The inactive timer: a task that blocks keeps its bandwidth in
// running_bw until its 0-lag time, then loses it.
func TestDLInactiveTimer(t *testing.T) {
	s := newSim(t, smallSpec(1, 1, 1, 1, "interleaved"), 1, "era", "6.6", "IDLE_STATES", "false")
	s.debug = true
	w := s.AddWorkload("dl", "dl")
	p := spawnDL(t, s, w, "p", 0, cpumask.Mask{}, dlParams(10*Millisecond, 0, 100*Millisecond, false), everyPeriod(2*Millisecond, 100*Millisecond))
	bw := p.dlse.bw
	s.RunUntil(3 * Millisecond) // ran 2 ms of 10 (runtime 8 ms left of deadline 100)
	if got := s.cpus[0].dl.runningBW; got != bw || !p.dlse.nonContending {
		t.Fatalf("just after blocking running_bw = %d (non contending %v), want %d", got, p.dlse.nonContending, bw)
	}
	// 0-lag: deadline - runtime·period/dl_runtime = 100 - 80 ms.
	zl := p.dlse.deadline - p.dlse.runtime*p.dlse.dlPeriod/p.dlse.dlRuntime
	s.RunUntil(zl - 1)
	if s.cpus[0].dl.runningBW != bw || zl < 20*Millisecond || zl > 20*Millisecond+100*Microsecond {
		t.Errorf("before the 0-lag time (%d ns, want 20 ms) running_bw dropped", zl)
	}
	s.RunUntil(zl + 1)
	if got := s.cpus[0].dl.runningBW; got != 0 || p.dlse.nonContending {
		t.Errorf("after the 0-lag time running_bw = %d, want 0", got)
	}
	if s.cpus[0].dl.thisBW != bw {
		t.Errorf("this_bw %d, want the task's %d (it still belongs to the runqueue)", s.cpus[0].dl.thisBW, bw)
	}
}

// Era 6.12: RT tasks are not throttled (no RT_GROUP_SCHED); the fair
// class gets its share under a FIFO hog from its deferred server: nothing
// until the zero-laxity time (950 ms after the fair task arrived), where
// the server, which would overflow its bandwidth with the deadline it has,
// starts a new period (replenish_dl_entity with dl_defer_armed) and runs
// its 50 ms; no longer deferred, it then runs 50 ms at the start of every
// period: 950-1000 ms, 1950-2000 ms, ... Era 6.6's RT throttling gives the
// fair task the last 50 ms of every period: the same windows here, by
// another mechanism (RT throttled, no fair server).
func TestFairServerUnderRTHog(t *testing.T) {
	for _, c := range []struct {
		era  string
		want [3]int64 // fair run time at 0.9 s, 1.1 s and 5 s, ms
	}{{"6.12", [3]int64{0, 50, 250}}, {"6.6", [3]int64{0, 50, 250}}} {
		s := newSim(t, smallSpec(1, 1, 1, 1, "interleaved"), 1, "era", c.era, "IDLE_STATES", "false")
		s.debug = true
		w := s.AddWorkload("mix", "mix")
		f := spawnOn(t, s, w, "fair", 0, 0, hog())
		spawnRT(t, s, w, "fifo", 0, cpumask.Mask{}, PolicyFIFO, 50, hog())
		for i, at := range []int64{900 * Millisecond, 1100 * Millisecond, 5 * Second} {
			s.RunUntil(at)
			if got := f.sumExec / Millisecond; got < c.want[i]-1 || got > c.want[i]+1 {
				t.Errorf("era %s: the fair hog ran %d ms by %d ms, want %d", c.era, got, at/Millisecond, c.want[i])
			}
		}
		st, rt := s.DL(), s.RT()
		if c.era == "6.12" && (st != nil || s.dl == nil || s.dl.totalBW != toRatio(fairServerPeriod, fairServerRuntime) || rt.Throttles != 0) {
			t.Errorf("era 6.12: DL() %+v (want nil: no deadline task), total_bw of the fair server, RT throttles %d (want none)", st, rt.Throttles)
		}
		if c.era == "6.6" && (st != nil || rt.Throttles < 4) {
			t.Errorf("era 6.6: deadline class %+v (want none), RT throttles %d (want one a period)", st, rt.Throttles)
		}
	}
}

// Era 6.12: a fair class that gets the CPU by itself uses its server's
// runtime in the background, so the server never runs: fair hogs beside a
// deadline task keep what the deadline task leaves them, and deadline
// admission counts the servers' 5% of each CPU.
func TestFairServerBackground(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.12", "IDLE_STATES", "false")
	s.debug = true
	w := s.AddWorkload("mix", "mix")
	f0 := spawnOn(t, s, w, "fair0", 0, 0, hog())
	spawnOn(t, s, w, "fair1", 1, 0, hog())
	spawnDL(t, s, w, "dl", 0, cpumask.Mask{}, dlParams(2*Millisecond, 0, 10*Millisecond, false), everyPeriod(Millisecond, 10*Millisecond))
	s.RunUntil(3 * Second)
	for _, c := range s.cpus {
		if fs := c.fairServer; fs == nil || !fs.active || fs.deferRunning || fs.onRQ {
			t.Errorf("cpu %d: fair server %+v, want active, deferred and never run", c.id, fs)
		}
	}
	if got := float64(f0.sumExec+s.tasks[1].sumExec) / float64(s.now); got < 1.88 {
		t.Errorf("fair hogs got %.3f CPUs of 2 beside a 10%% deadline task, want 1.9", got)
	}
	// 2 CPUs: limit 1.9, servers 0.1, dl 0.2: 1.6 more fit, 1.65 not.
	if _, err := s.Spawn(w, TaskSpec{Name: "big", Program: hog(), Policy: PolicyDeadline, DL: dlParams(65*Millisecond, 0, 40*Millisecond*1, false)}); err == nil {
		t.Errorf("admitted a task past 90%% of the CPUs")
	}
	if _, err := s.Spawn(w, TaskSpec{Name: "fits", Program: hog(), Policy: PolicyDeadline, DL: dlParams(8*Millisecond, 0, 10*Millisecond, false)}); err != nil {
		t.Errorf("refused a task that fits: %v", err)
	}
}

// A deadline task's bandwidth leaves the root domain when it exits (at
// its 0-lag time), so that a task refused before is admitted after; and
// a deadline task's affinity cannot be restricted (EPERM at
// sched_setattr, EBUSY at sched_setaffinity).
func TestDLExitAndAffinity(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.6", "IDLE_STATES", "false")
	s.debug = true
	w := s.AddWorkload("dl", "dl")
	steps := 0
	short := ProgramFunc(func(*Ctx) Action {
		steps++
		if steps == 1 {
			return Run(Millisecond)
		}
		return Exit()
	})
	spawnDL(t, s, w, "short", 0, cpumask.Mask{}, dlParams(90*Millisecond, 0, 100*Millisecond, false), short)
	big := spawnDL(t, s, w, "big", 0, cpumask.Mask{}, dlParams(90*Millisecond, 0, 100*Millisecond, false), hog())
	if _, err := s.Spawn(w, TaskSpec{Name: "third", Program: hog(), Policy: PolicyDeadline, DL: dlParams(90*Millisecond, 0, 100*Millisecond, false)}); err == nil {
		t.Fatalf("2.7 CPUs admitted on 2 (limit 1.9)")
	}
	s.RunUntil(50 * Millisecond) // short exited at ~1 ms; its 0-lag time is ~11 ms
	if got := s.DL().TotalBW; got > 0.901 {
		t.Fatalf("after short's exit total_bw is %.3f, want big's 0.9", got)
	}
	third := spawnDL(t, s, w, "third", 1, cpumask.Mask{}, dlParams(90*Millisecond, 0, 100*Millisecond, false), hog())
	if _, err := s.Spawn(w, TaskSpec{Name: "pinned", Allowed: cpumaskOf(s, 0), Program: hog(), Policy: PolicyDeadline, DL: dlParams(Millisecond, 0, 100*Millisecond, false)}); err == nil || !strings.Contains(err.Error(), "EPERM") {
		t.Errorf("a pinned deadline task: %v, want EPERM", err)
	}
	if err := s.SetAffinity(big.ID, cpumaskOf(s, 1)); err == nil || !strings.Contains(err.Error(), "EBUSY") {
		t.Errorf("restricting a deadline task's affinity: %v, want EBUSY", err)
	}
	s.RunUntil(300 * Millisecond)
	if big.sumExec < 260*Millisecond || third.sumExec < 220*Millisecond || big.cpu == third.cpu {
		t.Errorf("big ran %d ms on cpu %d, third %d ms on cpu %d; want each its 90 ms a period on a CPU of its own", big.sumExec/Millisecond, big.cpu, third.sumExec/Millisecond, third.cpu)
	}
}

// Era 6.12: a fair server whose zero-laxity time comes on a CPU that has
// gone idle wakes the CPU, finds no fair task to pick and stops
// (dl_server_stop in __pick_task_dl), so that the CPU is free for
// deadline placement again.
func TestFairServerStopsOnIdleCPU(t *testing.T) {
	s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", "6.12", "IDLE_STATES", "false")
	s.debug = true
	w := s.AddWorkload("mix", "mix")
	steps := 0
	short := ProgramFunc(func(*Ctx) Action {
		steps++
		if steps == 1 {
			return Run(5 * Millisecond)
		}
		return Exit()
	})
	f := spawnOn(t, s, w, "fair", 0, 0, short)
	spawnRT(t, s, w, "fifo", 1, cpumaskOf(s, 1), PolicyFIFO, 50, periodic(Millisecond, 9*Millisecond))
	s.RunUntil(2 * Second)
	fs := s.cpus[f.cpu].fairServer
	if fs.onRQ || fs.active || fs.replenishAt >= 0 {
		t.Errorf("the fair server of idle CPU %d: on rq %v, active %v, timer %d; want stopped", f.cpu, fs.onRQ, fs.active, fs.replenishAt)
	}
}

// Era 6.12's overload rule (v6.7: a pushable task alone makes its CPU
// push): a deadline hog replenished on a CPU where a fair task runs is
// queued behind it for a moment, pushable, and is pushed to the CPU
// without deadline tasks — every period, back and forth. Before (6.6),
// a CPU with one deadline entity never pushes.
func TestDLPushAlonePushable(t *testing.T) {
	for _, c := range []struct {
		era    string
		pushes bool
	}{{"6.6", false}, {"6.12", true}} {
		s := newSim(t, smallSpec(1, 2, 1, 2, "interleaved"), 1, "era", c.era, "IDLE_STATES", "false")
		w := s.AddWorkload("dl", "dl")
		for cpu := 0; cpu < 2; cpu++ {
			spawnOn(t, s, w, "fair", cpu, 0, hog())
		}
		spawnDL(t, s, w, "dl", 0, cpumask.Mask{}, dlParams(3*Millisecond, 10*Millisecond, 10*Millisecond, false), hog())
		s.RunUntil(Second)
		st := s.DL()
		t.Logf("era %s: %d pushes", c.era, st.Pushes)
		if got := st.Pushes > 50; got != c.pushes {
			t.Errorf("era %s: %d pushes of one deadline hog in 1 s (a period is 10 ms); want pushes %v", c.era, st.Pushes, c.pushes)
		}
		var misses int64
		for _, ts := range st.Tasks {
			misses += ts.Misses
		}
		if misses != 0 {
			t.Errorf("era %s: %d deadline misses", c.era, misses)
		}
	}
}
