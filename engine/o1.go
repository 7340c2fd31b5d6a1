package engine

import (
	"fmt"

	"schedplay/engine/knob"
)

// The 2.6 O(1) scheduler, era 2.6-o1 (knob era). It follows Linux 2.6.7's
// kernel/sched.c (June 2004, the first release with Nick Piggin's
// scheduler domains and Con Kolivas's interactivity tuning), read, not
// copied; SMT nice is the 2004 patch as posted (smtnice.go). What it keeps
// of the kernel, function by function:
//
//   - per-CPU runqueues with two priority arrays, active and expired, of
//     140 FIFO lists and a bitmap; the next task is the head of the first
//     non-empty list (sched_find_first_bit). Unlike the fair class's tree
//     the running task stays on its list, as in the kernel, so a preempted
//     task resumes first among its priority;
//   - static priority 120+nice; task_timeslice (BASE_TIMESLICE) =
//     MIN_TIMESLICE + (MAX-MIN)·(139-static_prio)/39 ticks: 10 ms at nice
//     19, 102 ms at nice 0, 200 ms at nice -20 with the defaults;
//   - sleep_avg in ns, capped at MAX_SLEEP_AVG = AVG_TIMESLICE·MAX_BONUS
//     (1020 ms): recalc_task_prio credits sleep time on wakeup (scaled up
//     while the bonus is low, the INTERACTIVE_SLEEP idle cap,
//     interactive_credit); schedule() charges the time run;
//     effective_prio = static_prio − (CURRENT_BONUS − MAX_BONUS/2), so
//     the dynamic priority is static ±5;
//   - the on-runqueue credit at pick time (activated 1: 30% of the wait,
//     woken by a task; 2: all of it, woken from an interrupt — the timer);
//   - scheduler_tick: the time slice counts down by whole ticks; at zero
//     the task gets a new slice and goes to the expired array, unless it
//     is TASK_INTERACTIVE and the expired array is not EXPIRED_STARVING
//     (STARVATION_LIMIT·nr_running ticks, or a better static priority
//     already expired), when it is reinserted at the tail of the active
//     array; an interactive task that has run a TIMESLICE_GRANULARITY
//     (SMP: × the online CPUs) goes to the tail of its list;
//   - schedule() switches the arrays when the active one is empty;
//   - try_to_wake_up preempts when the wakee's dynamic priority is better
//     than curr's (TASK_PREEMPTS_CURR), except a sync wakeup onto the
//     waker's own CPU, which is also enqueued without a priority
//     recalculation (__activate_task);
//   - fork (sched_fork, wake_up_forked_process): the child takes half of
//     the parent's slice left, both lose some sleep_avg (CHILD_PENALTY
//     95%, PARENT_PENALTY 100%) and the child is queued on the parent's
//     CPU just ahead of the parent in its list, without a preemption
//     check; sched_exit gives an exiting child's first slice back to the
//     parent and lets a CPU-hog child lower the parent's sleep_avg.
//
// Not modelled: real-time policies, TASK_UNINTERRUPTIBLE sleeps (every
// sleep is interruptible, so activated is never -1), yield, set_user_nice
// at run time, and the clock-skew correction of timestamps on migration
// (one clock here). Wakeup placement and balancing are in o1_balance.go.

// O(1) priority range (include/linux/sched.h, 2.6.7).
const (
	o1MaxRTPrio   = 100
	o1MaxPrio     = 140
	o1MaxUserPrio = 40
	o1BonusRatio  = 25 // PRIO_BONUS_RATIO
	o1MaxBonus    = o1MaxUserPrio * o1BonusRatio / 100
	o1Delta       = 2   // INTERACTIVE_DELTA
	o1CreditLimit = 100 // CREDIT_LIMIT
	o1ChildPen    = 95  // CHILD_PENALTY
	o1ParentPen   = 100 // PARENT_PENALTY
	o1ExitWeight  = 3   // EXIT_WEIGHT
	o1OnRQWeight  = 30  // ON_RUNQUEUE_WEIGHT
	o1BitmapWords = (o1MaxPrio + 63) / 64
)

// o1Task is a task's O(1) state.
type o1Task struct {
	staticPrio int
	prio       int
	timeSlice  int64 // ticks left
	firstSlice bool  // first_time_slice: still on the slice inherited at fork
	sleepAvg   int64 // ns
	credit     int64 // interactive_credit
	activated  int8
	stamp      int64 // p->timestamp
	parent     TaskID
	arr        int8 // index of the array holding the task, -1 none
	rq         int  // CPU whose arrays hold the task
	noPreempt  bool // woken by __activate_task: no TASK_PREEMPTS_CURR test
}

// prioArray is struct prio_array.
type prioArray struct {
	nrActive int
	bitmap   [o1BitmapWords]uint64
	queue    [o1MaxPrio][]*Task
}

func (a *prioArray) enqueue(t *Task, head bool) {
	q := a.queue[t.o1.prio]
	if head {
		q = append(q, nil)
		copy(q[1:], q)
		q[0] = t
	} else {
		q = append(q, t)
	}
	a.queue[t.o1.prio] = q
	a.bitmap[t.o1.prio/64] |= 1 << (t.o1.prio % 64)
	a.nrActive++
}

// enqueueBefore puts t just ahead of ref in ref's list (list_add_tail on
// ref's run_list).
func (a *prioArray) enqueueBefore(t, ref *Task) {
	q := a.queue[ref.o1.prio]
	i := 0
	for i < len(q) && q[i] != ref {
		i++
	}
	q = append(q, nil)
	copy(q[i+1:], q[i:])
	q[i] = t
	a.queue[ref.o1.prio] = q
	a.bitmap[ref.o1.prio/64] |= 1 << (ref.o1.prio % 64)
	a.nrActive++
}

func (a *prioArray) dequeue(t *Task) {
	q := a.queue[t.o1.prio]
	for i, x := range q {
		if x == t {
			copy(q[i:], q[i+1:])
			q[len(q)-1] = nil
			q = q[:len(q)-1]
			a.queue[t.o1.prio] = q
			if len(q) == 0 {
				a.bitmap[t.o1.prio/64] &^= 1 << (t.o1.prio % 64)
			}
			a.nrActive--
			return
		}
	}
	panic("engine: task not on its O(1) priority list: " + t.Name)
}

// first is sched_find_first_bit: the lowest priority index with a task.
func (a *prioArray) first() int { return findFirstBit(a.bitmap[:], o1MaxPrio) }

// o1RQ is the O(1) part of struct runqueue.
type o1RQ struct {
	arrays          [2]prioArray
	active          int8  // which of arrays is rq->active
	expiredAt       int64 // expired_timestamp in jiffies, -1 when none
	bestExpiredPrio int
	cpuLoad         int64 // rq->cpu_load (o1_balance.go)
	activeBalance   bool
}

func (r *o1RQ) activeArr() *prioArray  { return &r.arrays[r.active] }
func (r *o1RQ) expiredArr() *prioArray { return &r.arrays[1-r.active] }

// o1InitRQ sets up c's O(1) runqueue.
func (s *Sim) o1InitRQ(c *cpu) {
	c.o1 = &o1RQ{expiredAt: -1, bestExpiredPrio: o1MaxPrio}
	for i := range c.doms {
		// sd->balance_interval starts at 1 ms, last_balance at boot.
		c.doms[i].balanceIntervalMS = 1
		c.doms[i].lastBalance = 0
	}
}

// ---- the era's constants in ticks ----

func (s *Sim) o1MinTS() int64 { return max(s.k.Get(knob.O1MinTimesliceMS)*s.k.Get(knob.HZ)/1000, 1) }
func (s *Sim) o1MaxTS() int64 {
	return max(s.k.Get(knob.O1MaxTimesliceMS)*s.k.Get(knob.HZ)/1000, s.o1MinTS())
}

// o1AvgTS is AVG_TIMESLICE, the nice 0 slice.
func (s *Sim) o1AvgTS() int64 {
	return s.o1MinTS() + (s.o1MaxTS()-s.o1MinTS())*(o1MaxPrio-1-120)/(o1MaxUserPrio-1)
}

// o1MaxSleepAvg is MAX_SLEEP_AVG in ticks.
func (s *Sim) o1MaxSleepAvg() int64 { return s.o1AvgTS() * o1MaxBonus }

func (s *Sim) o1NSMaxSleepAvg() int64 { return s.o1MaxSleepAvg() * s.tickNS }

// o1StarvationLimit is STARVATION_LIMIT in ticks (0: off).
func (s *Sim) o1StarvationLimit() int64 {
	if v := s.k.Get(knob.O1StarvationLimitMS); v >= 0 {
		return v * s.k.Get(knob.HZ) / 1000
	}
	return s.o1MaxSleepAvg()
}

// o1TaskTimeslice is task_timeslice (BASE_TIMESLICE) in ticks.
func (s *Sim) o1TaskTimeslice(staticPrio int) int64 {
	return s.o1MinTS() + (s.o1MaxTS()-s.o1MinTS())*int64(o1MaxPrio-1-staticPrio)/(o1MaxUserPrio-1)
}

// O1TimesliceOf is the era's timeslice of a nice level, in ns.
func (s *Sim) O1TimesliceOf(nice int) int64 { return s.o1TaskTimeslice(120+nice) * s.tickNS }

func (s *Sim) jiffies() int64 { return s.now / s.tickNS }

// o1CurrentBonus is CURRENT_BONUS.
func (s *Sim) o1CurrentBonus(t *Task) int64 {
	return (t.o1.sleepAvg / s.tickNS) * o1MaxBonus / s.o1MaxSleepAvg()
}

// o1DeltaOf is DELTA(p): nice·10/40 (C division) + INTERACTIVE_DELTA.
func o1DeltaOf(t *Task) int { return (t.o1.staticPrio-120)*o1MaxBonus/40 + o1Delta }

// o1Interactive is TASK_INTERACTIVE.
func o1Interactive(t *Task) bool { return t.o1.prio <= t.o1.staticPrio-o1DeltaOf(t) }

// o1InteractiveSleep is INTERACTIVE_SLEEP in ns.
func (s *Sim) o1InteractiveSleep(t *Task) int64 {
	return (s.o1MaxSleepAvg()*int64(o1MaxBonus/2+o1DeltaOf(t)+1)/o1MaxBonus - 1) * s.tickNS
}

func o1HighCredit(t *Task) bool { return t.o1.credit > o1CreditLimit }
func o1LowCredit(t *Task) bool  { return t.o1.credit < -o1CreditLimit }

// o1EffectivePrio is effective_prio: an RT task keeps the priority
// sched_setscheduler gave it (MAX_USER_RT_PRIO-1 - rt_priority), with no
// sleep bonus.
func (s *Sim) o1EffectivePrio(t *Task) int {
	if t.rtPolicy() {
		return o1MaxRTPrio - 1 - t.rtPrio
	}
	bonus := int(s.o1CurrentBonus(t)) - o1MaxBonus/2
	return min(max(t.o1.staticPrio-bonus, o1MaxRTPrio), o1MaxPrio-1)
}

// o1Granularity is TIMESLICE_GRANULARITY (SMP form) in ticks.
func (s *Sim) o1Granularity(t *Task) int64 {
	e := o1MaxBonus - s.o1CurrentBonus(t)
	if e == 0 {
		e = 1
	}
	return s.o1MinTS() * (int64(1) << (e - 1)) * int64(s.topo.NCPU)
}

// o1InitTask sets a new task's O(1) state (sched_fork's part that does not
// depend on the parent).
func (s *Sim) o1InitTask(t *Task, parent *Task) {
	t.o1 = o1Task{staticPrio: 120 + t.Nice, arr: -1, rq: -1, parent: -1, stamp: s.now}
	t.o1.prio = t.o1.staticPrio
	t.o1.timeSlice = s.o1TaskTimeslice(t.o1.staticPrio)
	if parent != nil {
		t.o1.parent = parent.ID
		t.o1.sleepAvg = parent.o1.sleepAvg // dup_task_struct copies it
	}
	t.o1.prio = s.o1EffectivePrio(t)
}

// o1RecalcPrio is recalc_task_prio: credit the sleep that ended at now.
func (s *Sim) o1RecalcPrio(t *Task, now int64) {
	sleep := min(now-t.o1.stamp, s.o1NSMaxSleepAvg())
	if sleep > 0 {
		if t.mm != 0 && t.o1.activated != -1 && sleep > s.o1InteractiveSleep(t) {
			// A long sleeper is rated just interactive, not more.
			t.o1.sleepAvg = (s.o1MaxSleepAvg() - s.o1AvgTS()) * s.tickNS
			if !o1HighCredit(t) {
				t.o1.credit++
			}
		} else {
			f := o1MaxBonus - s.o1CurrentBonus(t)
			if f == 0 {
				f = 1
			}
			sleep *= f
			if o1LowCredit(t) {
				sleep = min(sleep, s.o1TaskTimeslice(t.o1.staticPrio)*s.tickNS)
			}
			t.o1.sleepAvg += sleep
			if t.o1.sleepAvg > s.o1NSMaxSleepAvg() {
				t.o1.sleepAvg = s.o1NSMaxSleepAvg()
				if !o1HighCredit(t) {
					t.o1.credit++
				}
			}
		}
	}
	t.o1.prio = s.o1EffectivePrio(t)
}

// ---- the priority arrays as the engine's runqueue ----

// o1Enqueue puts t on c's active (or expired) array.
func (s *Sim) o1Enqueue(c *cpu, t *Task, expired, head bool) {
	r := c.o1
	idx := r.active
	if expired {
		idx = 1 - idx
	}
	r.arrays[idx].enqueue(t, head)
	t.o1.arr, t.o1.rq = idx, c.id
}

// o1Dequeue takes t off the array holding it.
func (s *Sim) o1Dequeue(t *Task) {
	if t.o1.arr < 0 {
		return
	}
	s.cpus[t.o1.rq].o1.arrays[t.o1.arr].dequeue(t)
	t.o1.arr, t.o1.rq = -1, -1
}

// o1TreeInsert is treeInsert for the era: c.tree lists the queued tasks
// (unordered); the arrays decide. A task not on an array is activated at
// the tail of the active array; one on another CPU's array is pulled
// (pull_task: to the same kind of array, at the tail); one already here
// (curr put back by schedule) stays where it is.
func (s *Sim) o1TreeInsert(c *cpu, t *Task) {
	c.tree = append(c.tree, t)
	switch {
	case t.o1.arr < 0:
		s.o1Enqueue(c, t, false, false)
	case t.o1.rq != c.id:
		src := s.cpus[t.o1.rq].o1
		expired := t.o1.arr != src.active
		s.o1Dequeue(t)
		s.o1Enqueue(c, t, expired, false)
	}
	s.updateConservation(c)
}

// o1Pick is schedule()'s choice: switch the arrays when the active one is
// empty, then the head of the best list.
func (s *Sim) o1Pick(c *cpu) *Task {
	r := c.o1
	if len(c.tree) == 0 {
		r.expiredAt = -1
		return nil
	}
	if r.activeArr().nrActive == 0 {
		r.active = 1 - r.active
		r.expiredAt = -1
		r.bestExpiredPrio = o1MaxPrio
	}
	a := r.activeArr()
	idx := a.first()
	if idx >= o1MaxPrio {
		panic(fmt.Sprintf("engine: cpu %d has %d queued tasks but empty O(1) arrays", c.id, len(c.tree)))
	}
	return a.queue[idx][0]
}

// o1ChargePrev is schedule()'s charge of the time prev ran against its
// sleep_avg.
func (s *Sim) o1ChargePrev(prev *Task) {
	run := min(s.now-prev.o1.stamp, s.o1NSMaxSleepAvg())
	if o1HighCredit(prev) {
		if b := s.o1CurrentBonus(prev); b > 0 {
			run /= b
		}
	}
	prev.o1.sleepAvg -= run
	if prev.o1.sleepAvg <= 0 {
		prev.o1.sleepAvg = 0
		if !o1HighCredit(prev) && !o1LowCredit(prev) {
			prev.o1.credit--
		}
	}
	prev.o1.stamp = s.now
}

// o1SetNext is what schedule() does to the task it switches to: credit
// the time a woken task waited on the runqueue (all of it when woken from
// an interrupt, ON_RUNQUEUE_WEIGHT% otherwise), which may move it to
// another list, and stamp it.
func (s *Sim) o1SetNext(next *Task) {
	if next.o1.activated > 0 {
		delta := s.now - next.o1.stamp
		if next.o1.activated == 1 {
			delta = delta * (o1OnRQWeight * 128 / 100) / 128
		}
		c := s.cpus[next.o1.rq]
		expired := next.o1.arr != c.o1.active
		s.o1Dequeue(next)
		s.o1RecalcPrio(next, next.o1.stamp+delta)
		s.o1Enqueue(c, next, expired, false)
	}
	next.o1.activated = 0
	next.o1.stamp = s.now
}

// o1Activate is the enqueue half of try_to_wake_up: activate_task
// (recalc_task_prio, activated 1 or 2 from an interrupt, stamp) or, for a
// sync wakeup onto the waker's CPU, __activate_task alone.
func (s *Sim) o1Activate(c *cpu, t *Task) {
	t.o1.noPreempt = false
	if s.o1Wake.sync && s.o1Wake.from == c.id {
		t.o1.noPreempt = true
	} else {
		s.o1RecalcPrio(t, s.now)
		if t.o1.activated == 0 {
			t.o1.activated = 1
			if s.o1Wake.irq {
				t.o1.activated = 2
			}
		}
		t.o1.stamp = s.now
	}
	t.state = TaskRunnable
	t.cpu = c.id
	s.o1TreeInsert(c, t)
	s.accountEnqueue(c, t)
}

// o1WakeCtx says how the wakeup being enqueued was issued.
type o1WakeCtx struct {
	sync bool // WF_SYNC
	irq  bool // from an interrupt (a timer)
	from int  // the waker's CPU
}

// o1PreemptWakeup is TASK_PREEMPTS_CURR.
func (s *Sim) o1PreemptWakeup(c *cpu, p *Task) bool {
	curr := c.curr
	if curr == nil {
		return true
	}
	if curr == p || c.needResched || curr.state != TaskRunning || p.o1.noPreempt {
		return false
	}
	return p.o1.prio < curr.o1.prio
}

// o1EnqueueNew is wake_up_forked_process on c, the CPU the fork ran on
// (2.6.7 has no fork balancing): both lose sleep_avg, the child takes its
// parent's priority and goes just ahead of it in its list.
func (s *Sim) o1EnqueueNew(c *cpu, t *Task) {
	msa, nsTick := s.o1MaxSleepAvg(), s.tickNS
	var parent *Task
	if t.o1.parent >= 0 {
		parent = s.tasks[t.o1.parent]
		parent.o1.sleepAvg = s.o1CurrentBonus(parent) * o1ParentPen / 100 * msa / o1MaxBonus * nsTick
	}
	t.o1.sleepAvg = s.o1CurrentBonus(t) * o1ChildPen / 100 * msa / o1MaxBonus * nsTick
	t.o1.credit = 0
	t.o1.prio = s.o1EffectivePrio(t)
	t.state = TaskRunnable
	t.cpu = c.id
	if parent != nil && parent.o1.arr >= 0 && parent.o1.rq == c.id {
		t.o1.prio = parent.o1.prio
		c.o1.arrays[parent.o1.arr].enqueueBefore(t, parent)
		t.o1.arr, t.o1.rq = parent.o1.arr, c.id
	}
	s.o1TreeInsert(c, t)
	s.accountEnqueue(c, t)
}

// o1SplitSlice is sched_fork's share of the parent's slice: the child
// gets the larger half; a parent left with nothing keeps one tick and
// runs scheduler_tick at once (which expires it).
func (s *Sim) o1SplitSlice(parent, child *Task) {
	child.o1.timeSlice = (parent.o1.timeSlice + 1) / 2
	child.o1.firstSlice = true
	parent.o1.timeSlice /= 2
	child.o1.stamp = s.now
	if parent.o1.timeSlice == 0 {
		parent.o1.timeSlice = 1
		if parent.state == TaskRunning && parent.cpu >= 0 {
			c := s.cpus[parent.cpu]
			if c.curr == parent && s.o1Tick(c) {
				c.needResched = true
				s.kick(c, s.now)
			}
		}
	}
}

// o1Deactivate is deactivate_task for curr blocking or exiting; an exit
// also runs sched_exit for the parent.
func (s *Sim) o1Deactivate(t *Task, state TaskState) {
	s.o1Dequeue(t)
	if state != TaskExited || t.o1.parent < 0 {
		return
	}
	p := s.tasks[t.o1.parent]
	if p.state == TaskExited {
		return
	}
	if t.o1.firstSlice {
		p.o1.timeSlice = min(p.o1.timeSlice+t.o1.timeSlice, s.o1MaxTS())
	}
	if t.o1.sleepAvg < p.o1.sleepAvg {
		p.o1.sleepAvg = p.o1.sleepAvg/(o1ExitWeight+1)*o1ExitWeight + t.o1.sleepAvg/(o1ExitWeight+1)
	}
}

// o1Starving is EXPIRED_STARVING for c (its curr is the task expiring).
func (s *Sim) o1Starving(c *cpu) bool {
	r := c.o1
	if lim := s.o1StarvationLimit(); lim > 0 && r.expiredAt >= 0 && s.jiffies()-r.expiredAt >= lim*int64(c.nr)+1 {
		return true
	}
	return c.curr.o1.staticPrio > r.bestExpiredPrio
}

// o1Tick is scheduler_tick's timeslice part for c's running task. It
// reports whether curr must reschedule.
func (s *Sim) o1Tick(c *cpu) bool {
	p := c.curr
	r := c.o1
	if p.o1.arr != r.active || p.o1.rq != c.id {
		return true // expired already, not yet switched away
	}
	if p.rtPolicy() {
		// scheduler_tick: an RT task never expires; a SCHED_RR one
		// that used its task_timeslice goes to the end of its list in
		// the active array, a SCHED_FIFO one runs on.
		if p.policy != PolicyRR {
			return false
		}
		p.o1.timeSlice--
		if p.o1.timeSlice > 0 {
			return false
		}
		p.o1.timeSlice = s.o1TaskTimeslice(p.o1.staticPrio)
		p.o1.firstSlice = false
		s.o1Dequeue(p)
		s.o1Enqueue(c, p, false, false)
		return true
	}
	p.o1.timeSlice--
	if p.o1.timeSlice <= 0 {
		s.o1Dequeue(p)
		p.o1.prio = s.o1EffectivePrio(p)
		p.o1.timeSlice = s.o1TaskTimeslice(p.o1.staticPrio)
		p.o1.firstSlice = false
		if r.expiredAt < 0 {
			r.expiredAt = s.jiffies()
		}
		if !o1Interactive(p) || s.o1Starving(c) {
			s.o1Enqueue(c, p, true, false)
			r.bestExpiredPrio = min(r.bestExpiredPrio, p.o1.staticPrio)
		} else {
			s.o1Enqueue(c, p, false, false)
		}
		s.stats.o1Expiries++
		return true
	}
	g := s.o1Granularity(p)
	if o1Interactive(p) && (s.o1TaskTimeslice(p.o1.staticPrio)-p.o1.timeSlice)%g == 0 && p.o1.timeSlice >= g {
		s.o1Dequeue(p)
		p.o1.prio = s.o1EffectivePrio(p)
		s.o1Enqueue(c, p, false, false)
		return true
	}
	return false
}

// O1Prio returns a task's dynamic and static O(1) priority and its time
// slice left in ns (era 2.6-o1; zeros otherwise).
func (s *Sim) O1Prio(id TaskID) (prio, static int, sliceLeft int64) {
	t := s.tasks[id]
	return t.o1.prio, t.o1.staticPrio, t.o1.timeSlice * s.tickNS
}

// O1Arrays reports how many tasks c's active and expired arrays hold
// (curr included).
func (s *Sim) O1Arrays(cpu int) (active, expired int) {
	r := s.cpus[cpu].o1
	if r == nil {
		return 0, 0
	}
	return r.activeArr().nrActive, r.expiredArr().nrActive
}

// o1CheckRQ is the era's runqueue invariant: every queued task, and curr
// while it runs, is on exactly one of c's arrays at its priority, and the
// bitmaps and counts agree.
func (s *Sim) o1CheckRQ(c *cpu) error {
	want := len(c.tree)
	if c.curr != nil && c.curr.state == TaskRunning {
		want++
		if c.curr.o1.arr < 0 || c.curr.o1.rq != c.id {
			return fmt.Errorf("cpu %d: running task %s is on no O(1) array of this CPU", c.id, c.curr.Name)
		}
	}
	got := 0
	for ai := range c.o1.arrays {
		a := &c.o1.arrays[ai]
		n := 0
		for prio := range a.queue {
			q := a.queue[prio]
			if (len(q) > 0) != (a.bitmap[prio/64]&(1<<(prio%64)) != 0) {
				return fmt.Errorf("cpu %d: O(1) bitmap disagrees with list %d", c.id, prio)
			}
			for _, t := range q {
				if t.o1.prio != prio || int(t.o1.arr) != ai || t.o1.rq != c.id {
					return fmt.Errorf("cpu %d: task %s on list %d/%d says prio %d array %d rq %d", c.id, t.Name, ai, prio, t.o1.prio, t.o1.arr, t.o1.rq)
				}
				if t.state != TaskRunnable && !(t == c.curr && t.state == TaskRunning) {
					return fmt.Errorf("cpu %d: %s task %s on an O(1) array", c.id, t.state, t.Name)
				}
			}
			n += len(q)
		}
		if n != a.nrActive {
			return fmt.Errorf("cpu %d: O(1) array %d counts %d, holds %d", c.id, ai, a.nrActive, n)
		}
		got += n
	}
	if got != want {
		return fmt.Errorf("cpu %d: O(1) arrays hold %d tasks, runqueue %d", c.id, got, want)
	}
	return nil
}
