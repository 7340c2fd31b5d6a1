package engine

import "schedplay/engine/knob"

// The fair class of era 6.12: EEVDF as Debian's 6.12.117 runs it
// (kernel/sched/fair.c and features.h of linux-source-6.12 6.12.117; the
// reading, with line numbers, is docs/era612-research.md). What differs
// from era 6.6 (eevdf.go), each with the function it follows:
//
//   - Delayed dequeue (DELAY_DEQUEUE, DELAY_ZERO; dequeue_entity
//     fair.c:5549, pick_next_entity 5671, requeue_delayed_entity 6984).
//     A task that sleeps while not eligible (lag < 0) stays queued as
//     sched_delayed: in nr_running, the load and V. schedule() puts it
//     back in the tree (put_prev_entity), and the pick dequeues it for
//     real when it is the entity pick_eevdf chooses, leaving with its lag
//     clipped to 0 (DELAY_ZERO), then picks again. A wakeup before that
//     finds it still on_rq: ttwu_runnable requeues it where it is, with
//     no select_task_rq, no wake list and no record_wakee (ttwu.go).
//   - Slices: a task's sched_setattr slice (custom_slice) survives
//     place_entity and update_deadline; the base slice is 0.70 ms.
//   - PREEMPT_SHORT (do_preempt_short 1191, did_preempt_short 1180): an
//     eligible wakee with a shorter slice cancels curr's slice protection,
//     and update_curr reschedules an unprotected, ineligible curr.
//   - PLACE_REL_DEADLINE (dequeue_entity 5574, place_entity 5294): a task
//     moved without sleeping keeps deadline - vruntime across the move.
//   - Fork: task_fork_fair no longer places the child on the parent's
//     runqueue; wake_up_new_task places it once on the destination with
//     ENQUEUE_INITIAL, so PLACE_DEADLINE_INITIAL's half slice holds.
//   - pick_eevdf (926): curr is chosen over the best queued entity only
//     with a strictly earlier deadline, and a runqueue of one entity
//     returns it without the eligibility test. The queued entities with
//     equal deadlines keep the engine's vruntime order; the kernel's
//     deadline-ordered tree keeps the earlier inserted (not modelled).
//   - NEXT_BUDDY only sets the buddy; PICK_BUDDY decides whether the pick
//     honours it (backport "Untangle NEXT_BUDDY and pick_next_task()").
//
// min_vruntime became zero_vruntime, rebased to V whenever avg_vruntime()
// runs; V and eligibility do not depend on the base, so the engine keeps
// 6.6's min_vruntime follower as its base (updateMinVruntime66).
//
// Not modelled, as in era 6.6: the kernel picks with prev still counted as
// cfs_rq->curr (pick_task_fair), where the engine puts prev back first;
// NI_RANDOM's newidle sampling; group entities (every task is in the root
// group: the oracle's guest calls no setsid); the fair deadline server
// (it changes nothing without RT or deadline tasks).

// sliceOf is the request size place_entity and update_deadline give t:
// its custom slice, or the base slice.
func (s *Sim) sliceOf(t *Task) int64 {
	if t.customSlice > 0 {
		return t.customSlice
	}
	return s.baseSliceNS
}

// protected is protect_slice: curr still has the deadline it was picked
// with (set_protect_slice's stash; the engine keeps it in pickDeadline).
func protected(t *Task) bool { return t.pickDeadline == t.deadline }

// cancelProtect is cancel_protect_slice.
func cancelProtect(t *Task) {
	if protected(t) {
		t.pickDeadline = t.deadline + 1
	}
}

// placeEntity is place_entity of the EEVDF eras: t is put at V minus its
// saved lag (PLACE_LAG), the lag first inflated by (W + w_i)/W because
// adding t moves V towards it; its deadline is one slice later, half a
// slice for a new task placed with ENQUEUE_INITIAL
// (PLACE_DEADLINE_INITIAL). 6.12 adds a task's own slice (custom_slice)
// and the deadline PLACE_REL_DEADLINE kept relative when the task left
// without sleeping; in era 6.6 no task has either, so this is v6.6's
// place_entity there.
func (s *Sim) placeEntity(c *cpu, t *Task, initial bool) {
	v := s.avgVruntime(c)
	t.slice = s.sliceOf(t)
	vslice := calcDeltaFair(t.slice, t.weight)
	lag := int64(0)
	if s.k.On(knob.PLACE_LAG) && c.nr > 0 {
		_, load := avgSums(c)
		lag = t.vlag * (load + t.weight)
		if load == 0 {
			load = 1
		}
		lag /= load
	}
	t.vruntime = v - lag
	if t.relDeadline {
		t.deadline += t.vruntime
		t.relDeadline = false
		return
	}
	if initial && s.k.On(knob.PLACE_DEADLINE_INITIAL) {
		vslice /= 2
	}
	t.deadline = t.vruntime + vslice
}

// updateDeadline612 is update_curr's update_deadline and resched test of
// 6.12: a new deadline (t's own slice) once vruntime reaches the old one;
// with anything else queued (delayed tasks count: nr_running), curr is
// rescheduled then, or, with PREEMPT_SHORT, as soon as it is ineligible
// after a shorter wakee cancelled its protection (did_preempt_short).
func (s *Sim) updateDeadline612(c *cpu, t *Task) {
	resched := false
	if t.vruntime >= t.deadline {
		t.slice = s.sliceOf(t)
		t.deadline = t.vruntime + calcDeltaFair(t.slice, t.weight)
		resched = true
	}
	if c.nr <= 1 {
		return
	}
	if !resched && !(s.k.On(knob.PREEMPT_SHORT) && !protected(t) && !s.entityEligible(c, t)) {
		return
	}
	s.clearBuddies(c, t)
	if !c.needResched {
		c.needResched = true
		if s.actor != c.id {
			s.kick(c, s.now+s.k.Get(knob.IPINS))
		}
	}
}

// pickNext612 is pick_task_fair's loop over pick_next_entity: the next
// buddy if PICK_BUDDY honours it, else pick_eevdf; a delayed entity picked
// is dequeued for good and the pick runs again.
func (s *Sim) pickNext612(c *cpu) *Task {
	for len(c.tree) > 0 {
		if nb := c.nextBuddy; s.k.On(knob.PICK_BUDDY) && nb != nil && nb.state == TaskRunnable &&
			nb.cpu == c.id && s.entityEligible(c, nb) {
			return nb
		}
		se := s.pickEEVDF(c, nil)
		if se == nil || !se.delayed {
			return se
		}
		s.finishDelayedDequeue(c, se)
	}
	return nil
}

// delayDequeue is dequeue_entity's DELAY_DEQUEUE branch for curr t going
// to sleep while not eligible: it stays on c (nr_running, load, V; its
// load_avg keeps accruing as if runnable), marked delayed, and leaves the
// runnable count (se_runnable, cfs_rq runnable_avg). Its lag is not taken.
func (s *Sim) delayDequeue(c *cpu, t *Task) {
	s.clearBuddies(c, t)
	t.delayed = true // counted in c.nrDelayed once schedule() puts it back (putPrevDelayed)
	if s.rules.runnableAvg {
		c.runnableAvg.add(s.now, 0, -1024)
	}
	s.stats.delayedDequeues++
}

// putPrevDelayed is put_prev_entity for a prev that went to sleep delayed:
// still on_rq, it goes back into the tree, where a pick will dequeue it
// once it is chosen.
func (s *Sim) putPrevDelayed(c *cpu, t *Task) {
	s.class.enqueueEntity(c, t)
	c.nrDelayed++
	s.updateConservation(c)
}

// finishDelayedDequeue is dequeue_entity(DEQUEUE_SLEEP | DEQUEUE_DELAYED)
// from the pick: the delayed task t, now eligible, leaves c's tree with
// its lag taken (and clipped to 0 with DELAY_ZERO) and is blocked for
// real (__block_task).
func (s *Sim) finishDelayedDequeue(c *cpu, t *Task) {
	s.updateCurr(c)
	s.updateEntityLag(c, t)
	s.treeRemove66(c, t)
	s.clearBuddies(c, t)
	s.accountDequeue(c, t)
	t.delayed = false
	s.stats.delayedFlushed++
	if s.k.On(knob.DELAY_ZERO) && t.vlag > 0 {
		t.vlag = 0
	}
	s.updateMinVruntime66(c)
}

// requeueDelayed is enqueue_task(ENQUEUE_DELAYED) → requeue_delayed_entity
// for a delayed task woken on its runqueue c: with DELAY_ZERO a task that
// has become eligible (positive lag) is placed again at V with lag 0;
// otherwise it keeps its vruntime and deadline. It is runnable again.
func (s *Sim) requeueDelayed(c *cpu, t *Task) {
	s.updateCurr(c)
	if s.k.On(knob.DELAY_ZERO) {
		s.updateEntityLag(c, t)
		if t.vlag > 0 {
			s.treeRemove66(c, t)
			t.vlag = 0
			s.placeEntity(c, t, false)
			s.treeInsert66(c, t)
		}
	}
	t.delayed = false
	c.nrDelayed--
	if s.rules.runnableAvg {
		c.runnableAvg.add(s.now, 0, 1024)
	}
	t.state = TaskRunnable
	s.updateConservation(c)
}

// doPreemptShort is do_preempt_short: PREEMPT_SHORT and a wakee with a
// shorter slice that is eligible and either due before curr or facing an
// ineligible curr.
func (s *Sim) doPreemptShort(c *cpu, p, curr *Task) bool {
	if !s.k.On(knob.PREEMPT_SHORT) || p.slice >= curr.slice || !s.entityEligible(c, p) {
		return false
	}
	return p.deadline < curr.deadline || !s.entityEligible(c, curr)
}

// enqueueEEVDF is enqueue_entity in the EEVDF eras: update_curr,
// place_entity (initial: ENQUEUE_INITIAL) with the lag saved at dequeue
// (wherever the task slept or came from, no renormalisation), then into
// the tree and the counts. A 6.12 delayed task the balancer moves stays
// delayed (asleep for its program).
func (s *Sim) enqueueEEVDF(c *cpu, t *Task, initial bool) {
	s.updateCurr(c)
	s.placeEntity(c, t, initial)
	if !t.delayed {
		t.state = TaskRunnable
	}
	t.cpu = c.id
	s.treeInsert66(c, t)
	s.accountEnqueue(c, t)
}

// enqueueWakeupEEVDF is enqueue_entity for a wakeup in the EEVDF eras. (A
// 6.12 task still delayed is requeued instead: requeueDelayed.)
func (s *Sim) enqueueWakeupEEVDF(c *cpu, t *Task) { s.enqueueEEVDF(c, t, false) }

// enqueueNewEEVDF is wake_up_new_task's activate_task. v6.6 passes no
// ENQUEUE_INITIAL, so place_entity places the child again at the
// destination's V with its zero lag and a whole slice to its deadline:
// the half slice task_fork_fair gave it does not survive (v6.6.57).
// 6.12 passes ENQUEUE_INITIAL (initial) and this is the only placement,
// so PLACE_DEADLINE_INITIAL's half slice holds.
func (s *Sim) enqueueNewEEVDF(c *cpu, t *Task, initial bool) {
	s.enqueueEEVDF(c, t, initial)
	if s.k.Get(knob.SHARED_RUNQ) == knob.SharedRunqAll {
		s.srqPush(t, c)
	}
}

// fork612 is __sched_fork and task_fork_fair of 6.12: zero lag, no
// relative deadline, the parent's custom slice (sched_fork keeps it), and
// no placement on the parent's runqueue.
func (s *Sim) fork612(t, parent *Task) {
	t.vlag = 0
	t.relDeadline = false
	if parent != nil && t.customSlice == 0 {
		t.customSlice = parent.customSlice // unless the child's spec asks for its own
	}
	t.slice = s.sliceOf(t)
}

// relDeadlineOut is dequeue_entity's PLACE_REL_DEADLINE for a dequeue that
// is not a sleep: keep the deadline relative to the vruntime.
func (s *Sim) relDeadlineOut(t *Task) {
	if s.k.On(knob.PLACE_REL_DEADLINE) {
		t.deadline -= t.vruntime
		t.relDeadline = true
	}
}

// detachQueuedEEVDF is dequeue_entity for a queued task leaving c (load
// balancing, the shared runqueue, affinity): update_curr, then its lag is
// saved while it still counts in V; 6.12 keeps its deadline relative
// (PLACE_REL_DEADLINE). A 6.12 delayed task stays delayed: the balancer
// may move it (detach_tasks has no exemption), and its new runqueue's next
// pick dequeues it.
func (s *Sim) detachQueuedEEVDF(c *cpu, t *Task, payer *cpu) {
	s.srqRemove(t, payer)
	s.updateCurr(c)
	s.updateEntityLag(c, t)
	s.treeRemove66(c, t)
	s.clearBuddies(c, t)
	s.accountDequeue(c, t)
	s.relDeadlineOut(t)
	s.updateMinVruntime66(c)
	if t.delayed {
		s.stats.delayedMigrated++
	}
}

// attachQueuedEEVDF is enqueue_entity for a migrated task
// (ENQUEUE_MIGRATED): placed on c with the lag it left with.
func (s *Sim) attachQueuedEEVDF(c *cpu, t *Task, payer *cpu) {
	s.enqueueEEVDF(c, t, false)
	if s.k.Get(knob.SHARED_RUNQ) == knob.SharedRunqAll && !t.delayed {
		s.srqPush(t, payer)
	}
}

// pushCurrEEVDF is the stopper moving c's just-stopped task t (already
// put back, neither curr nor in the tree) to dst: its lag is taken with t
// still counted in c's V, as move_queued_task's dequeue does (and, in 6.12,
// its deadline kept relative).
func (s *Sim) pushCurrEEVDF(c *cpu, t *Task, dst *cpu) {
	avg := c.avgVruntime + entityKey(c, t)*t.weight
	load := c.avgLoad + t.weight
	t.vlag = s.entityLag(c.minVruntime+floorDiv(avg, load), t)
	s.accountDequeue(c, t)
	s.relDeadlineOut(t)
	s.attachQueuedEEVDF(dst, t, c)
	if c.pushLB {
		s.activePushed(c, dst)
	}
	s.wakeForPulled(dst, t)
}

// Delayed reports whether the task is asleep but still queued by
// DELAY_DEQUEUE (era 6.12).
func (t *Task) Delayed() bool { return t.delayed }
