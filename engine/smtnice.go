package engine

import "schedplay/engine/knob"

// SMT nice (Con Kolivas, 2004; seeds/smt-nice-2004.txt), grafted onto the
// fair class: when a CPU is about to run task p, a sibling running a task
// of higher static priority (lower nice) holds p back — the CPU idles —
// while that task's remaining O(1) timeslice × (100 - per_cpu_gain)/100
// exceeds p's own timeslice. Picking p also reschedules siblings that run
// lower-priority tasks (so they are held in turn), a held CPU re-checks at
// every tick (wake_priority_sleeper), and a CPU going idle kicks held
// siblings (wake_sleeping_dependent).
//
// The timeslices are the 2.6.4 O(1) scheduler's, by static priority:
// BASE_TIMESLICE = MIN + (MAX-MIN)·(19-nice)/39 with MIN 10 ms and MAX
// 200 ms, i.e. 10 ms at nice 19, 102 ms at nice 0, 200 ms at nice -20. Each
// task's remaining slice counts down while it runs and is refilled when it
// reaches zero, as O(1) did; only this rule reads it.

// o1TimesliceTicks is BASE_TIMESLICE in ticks.
func (s *Sim) o1TimesliceTicks(nice int) int64 {
	hz := s.k.Get(knob.HZ)
	minT := max(10*hz/1000, 1)
	maxT := 200 * hz / 1000
	return minT + (maxT-minT)*int64(19-nice)/39
}

// O1Timeslice is a nice level's O(1) timeslice in ns.
func (s *Sim) O1Timeslice(nice int) int64 { return s.o1TimesliceTicks(nice) * s.tickNS }

// chargeO1Slice counts down t's O(1) timeslice by delta of CPU time.
func (s *Sim) chargeO1Slice(t *Task, delta int64) {
	if !s.rules.smtNiceSlices {
		return // the class's own tick counts the real slice
	}
	t.o1Left -= delta
	if t.o1Left <= 0 {
		s.o1SliceRefill(t)
	}
}

// o1SliceRefill starts t's next slice(s) once the last one ran out (kept
// out of chargeO1Slice so that the common case inlines).
func (s *Sim) o1SliceRefill(t *Task) {
	slice := s.O1Timeslice(t.Nice)
	t.o1Left += ((-t.o1Left)/slice + 1) * slice
	s.smtSliceExpired(t)
}

// smtNiceHolds is the dependent-sleeper test: would a sibling running q
// hold back p? Integer arithmetic in ticks, as the patch did, so a nice
// -20 task (200 ms) holds a nice 19 one (10 ms) until 12 ms are left:
// 12·85/100 = 10 is no longer above 10. The patch tests "p->mm &&
// smt_curr->mm" first: kernel threads (mm 0 here) are never held and
// never hold — "kernel threads do not delay lower priority user tasks"
// (Con's mail). Its other half, rescheduling a lower-priority sibling when
// p is picked, has no mm test and stays as it is in dependentSleeper.
func (s *Sim) smtNiceHolds(q, p *Task) bool {
	if !s.rules.smtNiceSlices {
		return s.o1SMTNiceHolds(q, p)
	}
	if q == nil || q.mm == 0 || p.mm == 0 || p.Nice <= q.Nice {
		return false
	}
	left := (q.o1Left + s.tickNS - 1) / s.tickNS
	gain := s.k.Get(knob.PerCPUGain)
	return left*(100-gain)/100 > s.o1TimesliceTicks(p.Nice)
}

// dependentSleeper is dependent_sleeper: reports whether c must idle
// instead of running p, and reschedules siblings that p outranks.
func (s *Sim) dependentSleeper(c *cpu, p *Task) bool {
	held := false
	for _, id := range s.topo.CoreCPUs[c.core] {
		if id == c.id {
			continue
		}
		o := s.cpus[id]
		q := o.curr
		if s.smtNiceHolds(q, p) {
			held = true
		}
		switch {
		case q != nil && (q.Nice > p.Nice || s.rules.rtInClass && p.rtPolicy() && !q.rtPolicy()):
			// A lower-priority sibling, or (2.6.7) any non-RT one
			// when p is RT ("|| rt_task(p)"), is rescheduled.
			s.reschedRemote(o)
		case q == nil && o.smtHeld:
			s.kick(o, s.now+s.idleWakeDelay(o, c.id))
		}
	}
	return held
}

// reschedRemote is resched_task on a sibling: it reschedules once the IPI
// arrives.
func (s *Sim) reschedRemote(o *cpu) {
	o.needResched = true
	s.kick(o, s.now+s.k.Get(knob.IPINS))
}

// smtSliceExpired: in O(1) a task whose timeslice ran out went through
// schedule(), whose dependent_sleeper call rescheduled lower-priority
// siblings — which are then held again by the refilled slice.
func (s *Sim) smtSliceExpired(t *Task) {
	if !s.smtPresent || !s.k.On(knob.SMT_NICE) || t.state != TaskRunning || t.cpu < 0 {
		return
	}
	c := s.cpus[t.cpu]
	for _, id := range s.topo.CoreCPUs[c.core] {
		if o := s.cpus[id]; id != c.id && o.curr != nil && o.curr.Nice > t.Nice {
			s.reschedRemote(o)
		}
	}
}

// wakeSleepingDependent kicks siblings held back for priority reasons when
// c goes idle.
func (s *Sim) wakeSleepingDependent(c *cpu) {
	for _, id := range s.topo.CoreCPUs[c.core] {
		if o := s.cpus[id]; id != c.id && o.curr == nil && o.smtHeld {
			s.kick(o, s.now+s.idleWakeDelay(o, c.id))
		}
	}
}

// SMTHeld reports whether cpu idles with work queued because SMT_NICE
// holds it back.
func (s *Sim) SMTHeld(cpu int) bool { return s.cpus[cpu].smtHeld }

// o1SMTNiceHolds is the dependent-sleeper test of era 2.6-o1, on the real
// O(1) slices: a sibling running q holds p back while q's time slice left
// × (100 - per_cpu_gain)/100 exceeds task_timeslice(p), for user tasks of
// lower static priority than q (the patch as posted for 2.6.4-rc1-mm1;
// 2.6.7 merged a variant that compares the two slices without the static
// priority test).
func (s *Sim) o1SMTNiceHolds(q, p *Task) bool {
	if q == nil || q.mm == 0 || p.mm == 0 || p.rtPolicy() {
		return false // an RT task is never held (2.6.7: "!rt_task(p)")
	}
	if q.rtPolicy() {
		return true // "|| rt_task(smt_curr)": an RT sibling holds any user task
	}
	if p.o1.staticPrio <= q.o1.staticPrio {
		return false
	}
	gain := s.k.Get(knob.PerCPUGain)
	return q.o1.timeSlice*(100-gain)/100 > s.o1TaskTimeslice(p.o1.staticPrio)
}
