package engine

import (
	"fmt"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
)

// The deadline class (SCHED_DEADLINE) of kernel/sched/deadline.c and
// cpudeadline.c, as v5.2 (wangliang-cs/linux-5.2.1), Debian's 6.1
// (linux-source-6.1, 6.1.192) and 6.12 (linux-source-6.12, 6.12.118) have
// it, for what is modelled here:
//   - the constant bandwidth server of each task: runtime, absolute
//     deadline, the CBS wakeup rule (update_dl_entity, with the revised
//     rule for constrained deadlines), throttling when the runtime is used
//     up (update_curr_dl) and the replenishment timer at the next period
//     (start_dl_timer, dl_task_timer, replenish_dl_entity);
//   - EDF: the runqueue is ordered by absolute deadline, the earliest runs,
//     and a woken task with an earlier deadline preempts;
//   - admission control (sched_dl_overflow/__dl_overflow): the sum of
//     runtime/period may not pass sched_rt_runtime_us/sched_rt_period_us
//     of every CPU;
//   - placement: select_task_rq_dl with find_later_rq over cpudl (CPUs
//     without deadline tasks first, else the one whose earliest deadline is
//     latest), push_dl_task and pull_dl_task;
//   - GRUB (SCHED_FLAG_RECLAIM): running_bw, this_bw and extra_bw per
//     runqueue, the inactive timer at the 0-lag time (task_non_contending,
//     inactive_task_timer), and grub_reclaim in its v5.2/6.1 form and the
//     v6.5 form ("sched/deadline: Fix reclaim inaccuracy with SMP": max_bw,
//     and bw_ratio applied after the max).
//
// The class sits above the RT and fair classes in dlStack (class_dl.go); a
// run without a deadline task never builds it.
//
// Not modelled (README, "The deadline class"): priority inheritance
// (boosting), SCHED_FLAG_DL_OVERRUN and SCHED_FLAG_RESET_ON_FORK,
// check_preempt_equal_dl, HRTICK (off by default: runtime is enforced at
// the tick and at each update_curr, as in the kernel's default), frequency
// scaling of the runtime (the engine has no DVFS: cap_scale by 1024),
// cpusets and root domains (one root domain spans the machine), the
// cpudl heap's own order among CPUs with equal deadlines (lowest CPU id
// here). The deadline PELT signal (avg_dl) and the capacity it takes from
// the fair class are rtcap.go's.

// Fixed-point units of the kernel's bandwidth arithmetic (sched.h).
const (
	bwShift    = 20 // BW_SHIFT
	bwUnit     = 1 << bwShift
	ratioShift = 8  // RATIO_SHIFT
	dlScale    = 10 // DL_SCALE
	// dlPeriodMin and dlPeriodMax are sysctl_sched_dl_period_min and
	// _max at their defaults (100 µs, 1<<22 µs).
	dlPeriodMin = 100 * Microsecond
	dlPeriodMax = (1 << 22) * Microsecond
)

// toRatio is to_ratio: runtime/period in BW_SHIFT fixed point.
func toRatio(period, runtime int64) int64 {
	if runtime < 0 {
		return bwUnit // RUNTIME_INF
	}
	if period == 0 {
		return 0
	}
	return runtime << bwShift / period
}

// dl reports whether t is in the deadline class.
func (t *Task) dl() bool { return t.dlse != nil }

// dlEntity is a struct sched_dl_entity: a deadline task's, or a CPU's
// fair server (era 6.12, dlserver.go).
type dlEntity struct {
	task *Task // nil: the fair server of CPU cpu
	cpu  int
	// The fair server's states (dl_server, dl_defer, dl_defer_armed,
	// dl_defer_running, dl_server_active).
	server, deferred, deferArmed, deferRunning, active bool
	setUp                                              bool // dl_server_start has set its first period
	// dl_runtime, dl_deadline, dl_period, and dl_bw, dl_density.
	dlRuntime, dlDeadline, dlPeriod int64
	bw, density                     int64
	reclaim                         bool
	// runtime left and the absolute deadline of the current instance.
	runtime, deadline int64
	throttled         bool // dl_throttled
	yielded           bool // dl_yielded
	nonContending     bool // dl_non_contending: the inactive timer runs
	onRQ              bool // on_dl_rq: in its CPU's tree
	// rqCPU is the CPU whose this_bw holds the task (-1: none yet).
	rqCPU int
	// The two hrtimers, as expiry times (-1: not armed) with the order
	// they were armed in (equal expiries fire in that order).
	replenishAt, inactiveAt   int64
	replenishSeq, inactiveSeq uint64
	exited                    bool
	// explicitJobs: the program marks its jobs' ends (Ctx.EndJob).
	explicitJobs bool
	// Statistics: when the task became a deadline task, the deadline of
	// the current job (set when it wakes), jobs ended, those ended late,
	// and times throttled.
	started, jobDeadline    int64
	jobs, misses, throttles int64
}

// dlRQ is struct dl_rq: the entities by deadline (curr included while it
// runs, as in the kernel's rb-tree; equal deadlines in enqueue order;
// len(tree) is dl_nr_running, the fair server included), and the GRUB
// bandwidths.
type dlRQ struct {
	tree []*dlEntity
	// runningBW is running_bw (the active contending and active non
	// contending tasks), thisBW this_bw (every deadline task of this
	// runqueue), extraBW extra_bw (the bandwidth no admitted task
	// reserved, spread over the CPUs).
	runningBW, thisBW, extraBW int64
}

// earliest is earliest_dl.curr: the leftmost deadline (0: no task).
func (r *dlRQ) earliest() int64 {
	if len(r.tree) == 0 {
		return 0
	}
	return r.tree[0].deadline
}

// dlState is the Sim's deadline class state, built at the first deadline
// task.
type dlState struct {
	tasks []*Task
	// totalBW is the root domain's dl_bw.total_bw; limitBW its dl_bw.bw
	// (-1: sched_rt_runtime_us is -1, no limit); maxBW and bwRatio the
	// runqueues' max_bw and bw_ratio.
	totalBW, limitBW, maxBW, bwRatio int64
	grubMax                          bool // v6.5's grub_reclaim
	chargesRT                        bool // update_curr_dl adds to rt_rq->rt_time
	// fair is the era's fair class, which the fair servers pick from.
	fair                     schedClass
	mask                     cpumask.Mask
	seq                      uint64
	pushes, pulls, throttles int64
}

// dlTimerSlot is the event-queue slot of the deadline class's timers
// (each task's replenishment and inactive timers; the slot holds the
// earliest).
func (s *Sim) dlTimerSlot() int { return 3*s.topo.NCPU + 1 }

// enableDL builds the deadline class at the first deadline task: the
// runqueues' bandwidth state (init_dl_rq_bw_ratio, init_dl_bw) and the
// class stack above the others.
func (s *Sim) enableDL() error {
	if s.dl != nil {
		return nil
	}
	if why := s.rules.noDL; why != "" {
		return fmt.Errorf("engine: era %s does not model SCHED_DEADLINE: %s", s.era, why)
	}
	period := s.k.Get(knob.SchedRTPeriodUS) * Microsecond
	runtime := s.k.Get(knob.SchedRTRuntimeUS)
	if runtime >= 0 {
		runtime = min(runtime*Microsecond, period)
	}
	d := &dlState{
		limitBW: toRatio(period, runtime), maxBW: toRatio(period, runtime),
		bwRatio:   toRatio(runtime, period) >> (bwShift - ratioShift),
		grubMax:   s.rules.dlGrubMax,
		chargesRT: s.rules.dlChargesRT,
		mask:      cpumask.New(s.topo.NCPU),
	}
	if runtime < 0 {
		d.limitBW, d.maxBW, d.bwRatio = -1, bwUnit, 1<<ratioShift
	}
	for _, c := range s.cpus {
		c.dl = &dlRQ{extraBW: d.maxBW}
	}
	d.fair = s.class
	if k, ok := s.class.(rtStack); ok {
		d.fair = k.fair
	}
	s.dl = d
	s.class = dlStack{s.class, s}
	if s.rules.fairServer {
		s.initFairServers()
	}
	return nil
}

// admitDL checks a new deadline task's parameters (__checkparam_dl) and
// its bandwidth (sched_dl_overflow), and on success adds the bandwidth to
// the root domain (__dl_add). It returns the task's entity.
func (s *Sim) admitDL(name string, p DLParams) (*dlEntity, error) {
	dl, period := p.Deadline, p.Period
	if dl == 0 {
		dl = period
	}
	if period == 0 {
		period = dl
	}
	switch {
	case dl == 0:
		return nil, fmt.Errorf("engine: task %q: SCHED_DEADLINE needs a deadline or a period", name)
	case p.Runtime < 1<<dlScale:
		return nil, fmt.Errorf("engine: task %q: SCHED_DEADLINE runtime %d ns is below the kernel's minimum of %d ns", name, p.Runtime, 1<<dlScale)
	case period < dl || dl < p.Runtime:
		return nil, fmt.Errorf("engine: task %q: SCHED_DEADLINE needs runtime <= deadline <= period (runtime %d, deadline %d, period %d ns)", name, p.Runtime, dl, period)
	case s.rules.dlPeriodLimits && (period < dlPeriodMin || period > dlPeriodMax):
		return nil, fmt.Errorf("engine: task %q: SCHED_DEADLINE period %d ns outside sched_deadline_period_min_us..max_us (%d..%d ns)", name, period, dlPeriodMin, dlPeriodMax)
	}
	if err := s.enableDL(); err != nil {
		return nil, err
	}
	d := s.dl
	bw := toRatio(period, p.Runtime)
	n := int64(s.topo.NCPU)
	if d.limitBW >= 0 && d.limitBW*n < d.totalBW+bw {
		return nil, fmt.Errorf("engine: task %q: SCHED_DEADLINE admission refused (EBUSY): %.3f CPUs reserved already plus %.3f asked exceed the limit of %.3f CPUs (sched_rt_runtime_us/sched_rt_period_us × %d CPUs)",
			name, float64(d.totalBW)/bwUnit, float64(bw)/bwUnit, float64(d.limitBW*n)/bwUnit, n)
	}
	d.totalBW += bw
	for _, c := range s.cpus {
		c.dl.extraBW -= int64(int32(bw)) / n // __dl_update(dl_b, -((s32)tsk_bw / cpus))
	}
	return &dlEntity{
		dlRuntime: p.Runtime, dlDeadline: dl, dlPeriod: period,
		bw: bw, density: toRatio(dl, p.Runtime), reclaim: p.Reclaim,
		rqCPU: -1, replenishAt: -1, inactiveAt: -1, started: s.now,
	}, nil
}

// dlSub is __dl_sub: a task leaves the root domain's bandwidth.
func (s *Sim) dlSub(e *dlEntity) {
	n := int64(s.topo.NCPU)
	s.dl.totalBW -= e.bw
	for _, c := range s.cpus {
		c.dl.extraBW += int64(int32(e.bw)) / n
	}
}

// dlInsert puts e in c's tree by deadline (__enqueue_dl_entity), after
// the entities of equal deadline; a task's adds to nr_running
// (inc_dl_tasks), the fair server's does not.
func (s *Sim) dlInsert(c *cpu, e *dlEntity) {
	s.writeLine(s.actor, c, s.now)
	r := c.dl
	i := len(r.tree)
	for i > 0 && e.deadline < r.tree[i-1].deadline {
		i--
	}
	r.tree = append(r.tree, nil)
	copy(r.tree[i+1:], r.tree[i:])
	r.tree[i] = e
	e.onRQ = true
	if e.task != nil {
		c.dlNr++
		e.task.cpu = c.id
	}
	s.updateConservation(c)
}

// dlRemove takes e out of c's tree (__dequeue_dl_entity).
func (s *Sim) dlRemove(c *cpu, e *dlEntity) {
	if !e.onRQ {
		return
	}
	s.writeLine(s.actor, c, s.now)
	r := c.dl
	for i, x := range r.tree {
		if x == e {
			copy(r.tree[i:], r.tree[i+1:])
			r.tree[len(r.tree)-1] = nil
			r.tree = r.tree[:len(r.tree)-1]
			break
		}
	}
	e.onRQ = false
	if e.task != nil {
		c.dlNr--
	}
	s.updateConservation(c)
}

// dlAttach moves t's this_bw (and running_bw, when it is active) to c: a
// task assigned to a runqueue for the first time or migrated there.
func (s *Sim) dlAttach(c *cpu, t *Task, running bool) {
	e := t.dlse
	if e.rqCPU == c.id {
		return
	}
	if e.rqCPU >= 0 {
		o := s.cpus[e.rqCPU].dl
		o.thisBW -= e.bw
		if running {
			o.runningBW -= e.bw
		}
	}
	c.dl.thisBW += e.bw
	if running {
		c.dl.runningBW += e.bw
	}
	e.rqCPU = c.id
}

// dlEnqueueNew is the first enqueue of a task that has just become a
// deadline task (sched_setattr's enqueue with ENQUEUE_RESTORE, its
// bandwidth added to the runqueue, setup_new_dl_entity).
func (s *Sim) dlEnqueueNew(c *cpu, t *Task) {
	e := t.dlse
	s.dlAttach(c, t, true)
	e.deadline = s.now + e.dlDeadline
	e.runtime = e.dlRuntime
	e.jobDeadline = e.deadline
	t.state = TaskRunnable
	s.dlInsert(c, t.dlse)
}

// dlEnqueueWakeup is enqueue_dl_entity with ENQUEUE_WAKEUP for woken t on
// c (a CPU other than the one it slept on: ENQUEUE_MIGRATED, after
// migrate_task_rq_dl).
func (s *Sim) dlEnqueueWakeup(c *cpu, t *Task) {
	e := t.dlse
	t.state = TaskRunnable
	t.cpu = c.id
	if e.rqCPU != c.id {
		// migrate_task_rq_dl: an active non contending task leaves its
		// old runqueue's running_bw now, and this_bw moves.
		if e.nonContending {
			s.cpus[e.rqCPU].dl.runningBW -= e.bw
			e.nonContending = false
			s.dlDisarm(&e.inactiveAt)
		}
		s.dlAttach(c, t, false)
	}
	if !e.throttled && e.dlDeadline != e.dlPeriod {
		s.dlCheckConstrained(c, t)
	}
	s.dlContending(c, e)
	if e.throttled {
		return // the replenishment timer enqueues it
	}
	s.updateDLEntity(e)
	e.jobDeadline = e.deadline
	s.dlInsert(c, t.dlse)
}

// dlCheckConstrained is dl_check_constrained_dl: a constrained-deadline
// task woken after its deadline but before its next period waits for the
// period, throttled.
func (s *Sim) dlCheckConstrained(c *cpu, t *Task) {
	e := t.dlse
	if e.deadline < s.now && s.now < s.dlNextPeriod(e) {
		if !s.startDLTimer(t.dlse) {
			return
		}
		e.throttled = true
		if e.runtime > 0 {
			e.runtime = 0
		}
	}
}

// dlContending is task_contending: e is active again.
func (s *Sim) dlContending(c *cpu, e *dlEntity) {
	if e.nonContending {
		e.nonContending = false
		s.dlDisarm(&e.inactiveAt)
		return
	}
	c.dl.runningBW += e.bw
}

// dlNonContending is task_non_contending: e's task blocked (or exited),
// or the fair server stopped; its bandwidth stays in running_bw until its
// 0-lag time, when the inactive timer takes it off, or leaves now when
// that time has passed.
func (s *Sim) dlNonContending(c *cpu, e *dlEntity) {
	zerolag := e.deadline - e.runtime*e.dlPeriod/e.dlRuntime - s.now
	if zerolag < 0 || e.inactiveAt >= 0 {
		c.dl.runningBW -= e.bw
		if e.exited {
			c.dl.thisBW -= e.bw
			s.dlSub(e)
		}
		return
	}
	e.nonContending = true
	s.dlArm(&e.inactiveAt, &e.inactiveSeq, s.now+zerolag)
}

// dlEntityOverflow is dl_entity_overflow: would t's remaining runtime over
// its remaining time to the deadline exceed its bandwidth at time now?
func dlEntityOverflow(e *dlEntity, now int64) bool {
	left := (e.dlDeadline >> dlScale) * (e.runtime >> dlScale)
	right := ((e.deadline - now) >> dlScale) * (e.dlRuntime >> dlScale)
	return right < left
}

// updateDLEntity is update_dl_entity, the CBS wakeup rule: a task whose
// deadline passed, or whose runtime left would overflow its bandwidth,
// starts a new period (replenish_dl_new_period); a constrained-deadline
// task before its deadline gets the revised rule's runtime instead.
//
// A deferred fair server (6.12) that keeps its deadline and is not
// handling a starvation case waits, throttled, for its zero-laxity time.
func (s *Sim) updateDLEntity(e *dlEntity) {
	if e.deadline < s.now || dlEntityOverflow(e, s.now) {
		if (e.dlDeadline != e.dlPeriod || e.deferred && e.deferRunning) && e.deadline >= s.now {
			e.runtime = e.density * (e.deadline - s.now) >> bwShift // update_dl_revised_wakeup
			return
		}
		e.deferRunning = false
		s.replenishDLNewPeriod(e)
	} else if e.deferred && !e.deferRunning {
		e.deferArmed, e.throttled = true, true
	}
}

// replenishDLNewPeriod is replenish_dl_new_period: a new instance starts
// now; a deferred fair server not handling starvation defers it.
func (s *Sim) replenishDLNewPeriod(e *dlEntity) {
	e.deadline = s.now + e.dlDeadline
	e.runtime = e.dlRuntime
	if e.deferred && !e.deferRunning {
		e.deferArmed, e.throttled = true, true
	}
}

// dlNextPeriod is dl_next_period.
func (s *Sim) dlNextPeriod(e *dlEntity) int64 { return e.deadline - e.dlDeadline + e.dlPeriod }

// replenishDLEntity is replenish_dl_entity: periods are added until the
// runtime is positive; a deadline left in the past starts a new period.
//
// For a deferred fair server (6.12): the zero-laxity replenishment of one
// that would overflow starts a new period, and it is not deferred again.
func (s *Sim) replenishDLEntity(e *dlEntity) {
	if e.deferArmed && dlEntityOverflow(e, s.now) {
		e.deadline = s.now + e.dlDeadline
		e.runtime = e.dlRuntime
	}
	if e.yielded && e.runtime > 0 {
		e.runtime = 0
	}
	for e.runtime <= 0 {
		e.deadline += e.dlPeriod
		e.runtime += e.dlRuntime
	}
	if e.deadline < s.now {
		s.replenishDLNewPeriod(e)
	}
	e.yielded = false
	e.throttled = false
	if e.deferArmed {
		e.deferArmed = false
		return
	}
	if e.deferred && !e.deferRunning && s.now < e.deadline-e.runtime {
		e.deferArmed, e.throttled = true, true
		if !s.startDLTimer(e) {
			s.dlDisarm(&e.replenishAt)
			e.deferArmed, e.throttled = false, false
		}
	}
}

// dlEnqueueReplenish is enqueue_dl_entity with ENQUEUE_REPLENISH: a new
// runtime, and back on the tree unless a deferred server still waits.
func (s *Sim) dlEnqueueReplenish(c *cpu, e *dlEntity) {
	s.replenishDLEntity(e)
	s.dlEnqueueEnd(c, e)
}

// dlEnqueueEnd is the end of enqueue_dl_entity: an entity still throttled
// (a deferred fair server) waits for its timer; else it goes on c's tree,
// its timer cancelled. It reports whether it went on the tree.
func (s *Sim) dlEnqueueEnd(c *cpu, e *dlEntity) bool {
	if e.throttled && s.startDLTimer(e) {
		return false
	}
	if e.throttled {
		s.dlDisarm(&e.replenishAt)
		e.deferArmed, e.throttled = false, false
	}
	s.dlInsert(c, e)
	return true
}

// startDLTimer is start_dl_timer: the replenishment timer at the next
// period (a deferred fair server's at its zero-laxity time, deadline -
// runtime); false when that instant is already (a microsecond or more)
// past, and the caller replenishes at once.
func (s *Sim) startDLTimer(e *dlEntity) bool {
	act := s.dlNextPeriod(e)
	if e.deferArmed {
		act = e.deadline - e.runtime
	}
	if (act-s.now)/Microsecond < 0 {
		return false
	}
	if e.replenishAt < 0 {
		s.dlArm(&e.replenishAt, &e.replenishSeq, max(act, s.now))
	}
	return true
}

// grubReclaim is grub_reclaim: the runtime t's reclaiming entity is
// charged for running delta on c, at the GRUB rate
// max(u, Umax - Uinact - Uextra)/Umax.
func (s *Sim) grubReclaim(c *cpu, e *dlEntity, delta int64) int64 {
	d := s.dl
	r := c.dl
	uInact := r.thisBW - r.runningBW
	var uAct int64
	if d.grubMax {
		// v6.5+: compared with max_bw, bw_ratio applied after.
		if uInact+r.extraBW > d.maxBW-e.bw {
			uAct = e.bw
		} else {
			uAct = d.maxBW - uInact - r.extraBW
		}
		uAct = uAct * d.bwRatio >> ratioShift
	} else {
		uActMin := e.bw * d.bwRatio >> ratioShift
		if uInact+r.extraBW > bwUnit-uActMin {
			uAct = uActMin
		} else {
			uAct = bwUnit - uInact - r.extraBW
		}
	}
	return delta * uAct >> bwShift
}

// updateCurrDL is update_curr_dl for c's deadline curr t, which has just
// run delta: the runtime runs down (at the GRUB rate for a reclaiming
// task); used up (or yielded), the task is throttled until its next
// period, and the CPU reschedules unless t is still the earliest.
func (s *Sim) updateCurrDL(c *cpu, t *Task, delta int64) {
	e := t.dlse
	if !e.onRQ {
		return
	}
	scaled := delta
	if e.reclaim {
		scaled = s.grubReclaim(c, e, delta)
	}
	e.runtime -= scaled
	if e.runtime <= 0 || e.yielded {
		e.throttled = true
		e.throttles++
		s.dl.throttles++
		s.dlRemove(c, t.dlse)
		if !s.startDLTimer(e) {
			s.dlEnqueueReplenish(c, e)
		}
		if !e.onRQ || c.dl.tree[0] != e {
			c.needResched = true
			s.kick(c, s.now)
		}
	}
	if s.dl.chargesRT && s.rt != nil && s.rt.runtimeNS >= 0 && (s.rt.timerOn || c.rt.rtTime < c.rt.runtime) {
		// "we share the rt bandwidth": sched_rt_bandwidth_account.
		c.rt.rtTime += delta
	}
}

// dlDequeueSleep is dequeue_task_dl with DEQUEUE_SLEEP for curr t of c
// (blocked or exited; update_curr has run): its job ends.
func (s *Sim) dlDequeueSleep(c *cpu, t *Task, state TaskState) {
	e := t.dlse
	s.dlRemove(c, t.dlse)
	if !e.explicitJobs {
		s.dlEndJob(t)
	}
	e.exited = state == TaskExited
	s.dlNonContending(c, e)
}

// dlEndJob ends t's current job: late when past the deadline it woke
// with; the next job, if it starts without sleeping, has the current one.
func (s *Sim) dlEndJob(t *Task) {
	e := t.dlse
	e.jobs++
	if s.now > e.jobDeadline {
		e.misses++
	}
	e.jobDeadline = e.deadline
}

// dlArm arms one of a task's deadline timers (at, with its order) and
// points the class's event slot at the earliest timer.
func (s *Sim) dlArm(at *int64, seq *uint64, when int64) {
	s.dl.seq++
	*at, *seq = when, s.dl.seq
	s.dlResetSlot()
}

// dlDisarm cancels a deadline timer.
func (s *Sim) dlDisarm(at *int64) {
	if *at >= 0 {
		*at = -1
		s.dlResetSlot()
	}
}

// dlNextTimer is the earliest armed deadline timer: its entity, and
// whether it is the inactive timer (else the replenishment one).
func (s *Sim) dlNextTimer() (e *dlEntity, inactive bool, when int64) {
	var seq uint64
	when = -1
	try := func(x *dlEntity) {
		for _, tm := range [2]struct {
			at       int64
			seq      uint64
			inactive bool
		}{{x.replenishAt, x.replenishSeq, false}, {x.inactiveAt, x.inactiveSeq, true}} {
			if tm.at >= 0 && (when < 0 || tm.at < when || tm.at == when && tm.seq < seq) {
				e, inactive, when, seq = x, tm.inactive, tm.at, tm.seq
			}
		}
	}
	for _, t := range s.dl.tasks {
		try(t.dlse)
	}
	for _, c := range s.cpus {
		if c.fairServer != nil {
			try(c.fairServer)
		}
	}
	return e, inactive, when
}

// dlResetSlot schedules the class's event slot at the earliest timer.
func (s *Sim) dlResetSlot() {
	if _, _, when := s.dlNextTimer(); when >= 0 {
		s.q.schedule(s.dlTimerSlot(), when)
	} else {
		s.q.cancel(s.dlTimerSlot())
	}
}

// onDLTimer fires the earliest deadline timer.
func (s *Sim) onDLTimer() {
	e, inactive, _ := s.dlNextTimer()
	if e == nil {
		return
	}
	cpu := e.cpu
	if e.task != nil {
		cpu = max(e.task.cpu, 0)
	}
	c := s.cpus[cpu]
	s.actor = c.id
	switch {
	case inactive:
		e.inactiveAt = -1
		s.inactiveTaskTimer(e)
	case e.server:
		e.replenishAt = -1
		s.dlServerTimer(c, e)
	default:
		e.replenishAt = -1
		s.dlTaskTimer(c, e.task)
	}
	s.dlResetSlot()
}

// inactiveTaskTimer is inactive_task_timer: e's 0-lag time came while
// its task slept (or its server was stopped); its bandwidth leaves
// running_bw (and an exited task's leaves the runqueue and the root
// domain).
func (s *Sim) inactiveTaskTimer(e *dlEntity) {
	r := s.cpus[e.rqCPU].dl
	if e.exited {
		if e.nonContending {
			r.runningBW -= e.bw
			r.thisBW -= e.bw
			e.nonContending = false
		}
		s.dlSub(e)
		return
	}
	if !e.nonContending {
		return
	}
	r.runningBW -= e.bw
	e.nonContending = false
}

// dlTaskTimer is dl_task_timer: the replenishment of a throttled task.
// A task that slept meanwhile is only replenished; a queued one goes back
// on the tree, preempts what it should, and the CPU pushes what it can.
func (s *Sim) dlTaskTimer(c *cpu, t *Task) {
	e := t.dlse
	if !e.throttled {
		return
	}
	if t.state == TaskBlocked || t.state == TaskExited {
		s.replenishDLEntity(e)
		return
	}
	s.dlEnqueueReplenish(c, e)
	if c.curr != t {
		s.wakeForPulledAt(c, t, nil, s.now) // resched_curr, or the idle CPU's interrupt
	}
	if s.dlHasPushable(c) {
		s.pushDLTask(c)
	}
}

// dlPick is pick_task_dl: the earliest deadline; when that is the fair
// server, what the fair class picks (fair_server_pick_task), and with
// nothing to pick the server stops and the next entity is tried.
func (s *Sim) dlPick(c *cpu) *Task {
	for len(c.dl.tree) > 0 {
		e := c.dl.tree[0]
		if e.task != nil {
			return e.task
		}
		if t := s.dl.fair.pickNextTask(c); t != nil {
			return t
		}
		s.dlServerStop(c, e)
	}
	return nil
}

// dlPreempt is wakeup_preempt's class order plus wakeup_preempt_dl: does
// woken (or replenished, or pulled) deadline task p preempt c's curr?
func (s *Sim) dlPreempt(c *cpu, p *Task) bool {
	curr := c.curr
	if curr == nil {
		return true
	}
	if curr == p || c.needResched || curr.state != TaskRunning {
		return false
	}
	if !curr.dl() {
		return true
	}
	return p.dlse.deadline < curr.dlse.deadline
}

// dlPushable reports whether e may be pushed or pulled: a task's, queued,
// not running on c, with another CPU allowed (the pushable tree).
func dlPushable(c *cpu, e *dlEntity) bool {
	return e.task != nil && e.task != c.curr && e.task.nrAllowed > 1
}

// dlEarliestPushable is pick_earliest_pushable_dl_task: the earliest
// pushable task of c that may run on dst (-1: any).
func (s *Sim) dlEarliestPushable(c *cpu, dst int) *Task {
	for _, e := range c.dl.tree {
		if dlPushable(c, e) && (dst < 0 || e.task.allowed.Test(dst)) {
			return e.task
		}
	}
	return nil
}

// dlHasPushable is has_pushable_dl_tasks and dl_rq->overloaded, the gate
// of a push: more than one entity, one of them pushable (before v6.7);
// in era 6.12 a pushable task alone (coreRules.dlOverloadPushable).
func (s *Sim) dlHasPushable(c *cpu) bool {
	if !s.rules.dlOverloadPushable && len(c.dl.tree) < 2 {
		return false
	}
	return s.dlEarliestPushable(c, -1) != nil
}

// dlPullSource reports whether pull_dl_task takes from src: an
// overloaded CPU with more than one deadline entity (its
// dl_nr_running <= 1 skip, in every era).
func (s *Sim) dlPullSource(src *cpu) bool {
	return len(src.dl.tree) > 1 && s.dlEarliestPushable(src, -1) != nil
}

// cpudlFind is cpudl_find for p: the allowed CPUs without a deadline task
// (free_cpus) into s.dl.mask, else the CPU whose earliest deadline is the
// latest (the heap's maximum) when p's deadline is earlier; false: none.
func (s *Sim) cpudlFind(p *Task) bool {
	m := s.dl.mask
	m.AndNot(m)
	free := false
	best := -1
	for _, c := range s.cpus {
		if len(c.dl.tree) == 0 {
			if p.allowed.Test(c.id) {
				m.Set(c.id)
				free = true
			}
			continue
		}
		if best < 0 || c.dl.earliest() > s.cpus[best].dl.earliest() {
			best = c.id
		}
	}
	if free {
		return true
	}
	if best >= 0 && p.allowed.Test(best) && p.dlse.deadline < s.cpus[best].dl.earliest() {
		m.Set(best)
		return true
	}
	return false
}

// findLaterRQ is find_later_rq for p, run on CPU this: cpudl's CPUs, then
// the same preference as find_lowest_rq (p's CPU, this CPU within a
// wake-affine domain, the domain's first or next CPU, anything).
func (s *Sim) findLaterRQ(p *Task, this int) int {
	if p.nrAllowed == 1 {
		return -1
	}
	s.scanCost += s.probeNS // cpudl_find: the heap's maximum and free_cpus
	if !s.cpudlFind(p) {
		return -1
	}
	return s.affineFromMask(s.dl.mask, p.cpu, this)
}

// selectTaskRqDL is select_task_rq_dl for a wakeup of p issued on CPU
// this: p stays on its CPU unless that CPU runs a deadline task p cannot
// preempt (or one pinned there); then find_later_rq may move it where its
// deadline would be the earliest.
func (s *Sim) selectTaskRqDL(p *Task, this int, cur *Task, sync bool) *Decision {
	d, prev, pinned := s.beginClassDecision(p, this, cur, sync)
	if pinned {
		return d
	}
	pc := s.cpus[prev]
	s.scanCost += s.readLine(this, pc, s.now) // READ_ONCE(rq->curr)
	cpu, stage := prev, StageDLPrev
	if curr := pc.curr; curr != nil && curr.dl() && (curr.nrAllowed < 2 || !(p.dlse.deadline < curr.dlse.deadline)) {
		target := s.findLaterRQ(p, this)
		d.DLFind, d.DLLater = true, target
		if target >= 0 {
			tc := s.cpus[target]
			s.scanCost += s.readLine(this, tc, s.now+s.scanCost) // earliest_dl.curr
			if len(tc.dl.tree) == 0 || p.dlse.deadline < tc.dl.earliest() {
				cpu, stage = target, StageDLLater
			}
		}
	}
	if !p.allowed.Test(cpu) {
		cpu, stage = s.fallbackCPU(p, cpu), StageFallback
	}
	return s.finishDecision(d, cpu, stage)
}

// dlMove migrates queued deadline task t from src to dst with its
// bandwidth (deactivate_task, set_task_cpu, activate_task) and
// reschedules dst.
func (s *Sim) dlMove(src, dst *cpu, t *Task) {
	s.dlRemove(src, t.dlse)
	s.dlAttach(dst, t, true)
	s.dlInsert(dst, t.dlse)
	s.wakeForPulledAt(dst, t, src, s.now)
}

// pushDLTask is push_dl_task: move c's earliest pushable task where its
// deadline is the earliest. It reports whether it moved one.
func (s *Sim) pushDLTask(c *cpu) bool {
	next := s.dlEarliestPushable(c, -1)
	if next == nil {
		return false
	}
	if curr := c.curr; curr != nil && curr.dl() && next.dlse.deadline < curr.dlse.deadline && curr.nrAllowed > 1 {
		c.needResched = true
		s.kick(c, s.now)
		return false
	}
	cpu := s.findLaterRQ(next, c.id)
	if cpu < 0 || cpu == c.id {
		return false
	}
	dst := s.cpus[cpu]
	if len(dst.dl.tree) > 0 && !(next.dlse.deadline < dst.dl.earliest()) {
		return false
	}
	s.dl.pushes++
	s.dlMove(c, dst, next)
	return true
}

// pushDLTasks is push_dl_tasks.
func (s *Sim) pushDLTasks(c *cpu) {
	for n := 0; n < s.topo.NCPU && s.pushDLTask(c); n++ {
	}
}

// pullDLTask is pull_dl_task for c, which has just stopped running a
// deadline task: from every overloaded CPU, the earliest pushable task
// that may run on c and would be c's earliest, unless it is about to
// preempt its own CPU's curr; c then picks the earliest it pulled.
func (s *Sim) pullDLTask(c *cpu) {
	dmin := int64(1<<63 - 1)
	for _, src := range s.cpus {
		if src == c || !s.dlPullSource(src) {
			continue
		}
		if len(c.dl.tree) > 0 {
			if n := s.dlEarliestPushable(src, -1); n != nil && c.dl.earliest() < n.dlse.deadline {
				continue
			}
		}
		p := s.dlEarliestPushable(src, c.id)
		if p == nil || p.dlse.deadline >= dmin || len(c.dl.tree) > 0 && p.dlse.deadline >= c.dl.earliest() {
			continue
		}
		if curr := src.curr; curr != nil && curr.dl() && p.dlse.deadline < curr.dlse.deadline {
			continue
		}
		s.dl.pulls++
		s.dlRemove(src, p.dlse)
		s.dlAttach(c, p, true)
		s.dlInsert(c, p.dlse)
		dmin = p.dlse.deadline
	}
}

// taskWokenDL is task_woken_dl: a woken deadline task that did not
// preempt its CPU's deadline curr is pushed elsewhere at once.
func (s *Sim) taskWokenDL(c *cpu, p *Task) {
	curr := c.curr
	if p != curr && !c.needResched && p.nrAllowed > 1 && curr != nil && curr.dl() &&
		(curr.nrAllowed < 2 || !(p.dlse.deadline < curr.dlse.deadline)) {
		s.pushDLTasks(c)
	}
}

// yieldDL is yield_task_dl: curr t gives up the rest of its runtime until
// its next period (dl_yielded, then update_curr_dl throttles it).
func (s *Sim) yieldDL(c *cpu, t *Task) {
	t.dlse.yielded = true
	s.updateCurrDL(c, t, 0)
}

// DL returns the deadline class's counts, nil when the run had no
// deadline task (an era 6.12 run with RT tasks builds the class for its
// fair servers, whose bandwidth TotalBW then includes).
func (s *Sim) DL() *DLStats {
	if s.dl == nil || len(s.dl.tasks) == 0 {
		return nil
	}
	d := s.dl
	st := &DLStats{
		TotalBW: float64(d.totalBW) / bwUnit, LimitBW: -1,
		Pushes: d.pushes, Pulls: d.pulls, Throttles: d.throttles,
	}
	if d.limitBW >= 0 {
		st.LimitBW = float64(d.limitBW*int64(s.topo.NCPU)) / bwUnit
	}
	var all int64
	for _, t := range d.tasks {
		e := t.dlse
		ns := t.sumExec
		if t.state == TaskRunning {
			ns += s.now - t.execStart
		}
		all += ns
		ts := DLTaskStats{
			Task: t.ID, Name: t.Name, Workload: t.workload,
			RuntimeNS: e.dlRuntime, DeadlineNS: e.dlDeadline, PeriodNS: e.dlPeriod, Reclaim: e.reclaim,
			Reserved: float64(e.dlRuntime) / float64(e.dlPeriod),
			Jobs:     e.jobs, Misses: e.misses, Throttles: e.throttles,
		}
		if span := s.now - e.started; span > 0 {
			ts.Share = float64(ns) / float64(span)
		}
		st.Tasks = append(st.Tasks, ts)
	}
	if s.now > 0 {
		st.CPUPct = 100 * float64(all) / float64(s.now*int64(s.topo.NCPU))
	}
	return st
}

// checkDLRQ checks c's deadline tree against its counts (--debug).
func (s *Sim) checkDLRQ(c *cpu) error {
	r := c.dl
	tasks := 0
	for i, e := range r.tree {
		if !e.onRQ || e.throttled {
			return fmt.Errorf("cpu %d: dl entity %d on the tree (on rq %v, throttled %v)", c.id, i, e.onRQ, e.throttled)
		}
		if t := e.task; t != nil {
			tasks++
			if t.cpu != c.id {
				return fmt.Errorf("cpu %d: dl task %s (cpu %d) on the tree", c.id, t.Name, t.cpu)
			}
		} else if e != c.fairServer {
			return fmt.Errorf("cpu %d: another CPU's fair server on the tree", c.id)
		}
		if i > 0 && e.deadline < r.tree[i-1].deadline {
			return fmt.Errorf("cpu %d: dl tree out of deadline order at entity %d", c.id, i)
		}
	}
	if tasks != c.dlNr {
		return fmt.Errorf("cpu %d: dl nr %d, %d tasks on the tree", c.id, c.dlNr, tasks)
	}
	if r.runningBW < 0 || r.thisBW < r.runningBW {
		return fmt.Errorf("cpu %d: dl running_bw %d, this_bw %d", c.id, r.runningBW, r.thisBW)
	}
	return nil
}
