package engine

import "schedplay/engine/knob"

// try_to_wake_up after the placement decision, as v5.2 does it (core.c
// ttwu_queue, ttwu_queue_remote, sched_ttwu_pending, scheduler_ipi,
// resched_curr; Linux 5.2.1 at fc4ec72d):
//
//   - The decision does not claim the chosen CPU. idle_cpu() reads only
//     rq->curr, nr_running and the wake_list, which change when the waker
//     reaches ttwu_queue after the rest of its try_to_wake_up path (its
//     search, wake_ns): the same-LLC enqueue under the target's rq lock
//     (ttwu_do_activate) or the cross-LLC llist_add of ttwu_queue_remote.
//     A task waking up (finishWake) claims the CPU there (claimWake);
//     until then every other searcher still sees it idle, so two wakers
//     in that window stack on one CPU (HardwareStats.StackedWakeups).
//     A timer interrupt's wakeup (timerWakeup) runs its path in one event
//     and claims at its decision.
//   - Same LLC (or the waker's own CPU): the waker enqueues under the
//     remote rq lock (paying the lock/runqueue line transfer and
//     enqueue_ns) and, if the target must reschedule, sends an IPI — unless
//     the target waits with polling set (POLL, MWAIT), when storing its
//     need_resched flag is enough (set_nr_and_not_polling).
//   - Other LLC (TTWU_QUEUE): the waker only adds the task to the target's
//     wake_list and sends an IPI if the list was empty (a second wakeup
//     rides on the first IPI) and the target does not wait with polling set
//     (set_nr_if_polling). The target
//     enqueues the whole list in scheduler_ipi, paying enqueue_ns each.
//     From v6.0 (eras 6.1, 6.6: coreRules.wakeListIdle) a same-LLC target
//     with nothing on its runqueue is queued the same way.

// claimWake marks c as receiving a wakeup: the waker is at ttwu_queue,
// about to enqueue under c's rq lock or to fill its wake_list.
func (s *Sim) claimWake(c *cpu) { c.wakePending++ }

// ttwuQueue completes a wakeup of p claimed on c by a waker on CPU from.
// The waker reaches ttwu_queue at s.now+delay; stamp is where p's wakeup
// latency starts. It returns the waker's CPU time for this part (line
// transfers, the enqueue if the waker does it, the IPI send).
func (s *Sim) ttwuQueue(p *Task, c *cpu, from int, stamp, delay int64) int64 {
	at := s.now + delay
	if from != c.id && (!s.topo.ShareCache(from, c.id) || (s.rules.wakeListIdle && c.nr == 0)) {
		// ttwu_queue_remote (ttwu_queue_wakelist from v5.8): llist_add
		// on the target's wake_list, across LLCs, and (the era's
		// wakeListIdle) to a same-LLC target that runs nothing.
		cost := s.writeLine(from, c, at)
		s.stats.queuedWakeups++
		p.wakeStamp = stamp
		first := len(c.wakeList) == 0
		c.wakeList = append(c.wakeList, p)
		if !first {
			s.stats.ipiSaved++
			return cost
		}
		cost += s.notify(c, from, at+cost, true)
		return cost
	}
	c.wakePending--
	cost := s.k.Get(knob.EnqueueNS)
	if from != c.id {
		cost += s.writeLine(from, c, at) // the remote rq lock and runqueue
	}
	s.activate(p, c, from, stamp)
	return cost + s.wakeupPreemptFrom(c, p, from, at+cost)
}

// wakeupPreemptFrom is the end of an enqueue of p on c by a waker on CPU
// from, at time at: an idle c is made to run the scheduler, a busy one if
// wakeup_preempt says so (resched_curr); it returns the waker's cost of
// telling it (the IPI, when c is another CPU that needs one).
func (s *Sim) wakeupPreemptFrom(c *cpu, p *Task, from int, at int64) int64 {
	idle := c.curr == nil
	if !idle {
		if !s.class.wakeupPreempt(c, p) {
			return 0
		}
		c.needResched = true
	}
	if from == c.id {
		s.kick(c, at) // the interrupt or the waker is already running on c
		return 0
	}
	return s.notify(c, from, at, idle)
}

// notify makes c run the scheduler after a waker on CPU from set its
// need_resched (at time at): an idle CPU waiting with polling set (POLL,
// MWAIT) sees the flag's line move and leaves its state; any other CPU
// gets a reschedule IPI, which costs the sender ipi_send_ns and arrives
// ipi_ns later, after which an idle CPU still has to leave its state. It
// returns the sender's cost.
func (s *Sim) notify(c *cpu, from int, at int64, idle bool) int64 {
	if idle && s.wokenByStore(c) {
		s.stats.pollWakeups++
		s.kick(c, at+s.lineXfer(from, c.id)+s.exitLatency(c))
		return 0
	}
	send := s.k.Get(knob.IPISendNS)
	s.stats.ipisSent++
	exit := int64(0)
	if idle {
		exit = s.exitLatency(c)
	}
	s.kick(c, at+send+s.k.Get(knob.IPINS)+exit)
	return send
}

// ttwuPending is sched_ttwu_pending, run by scheduler_ipi (or by a polling
// idle CPU leaving its loop): enqueue every task on c's wake_list. The
// enqueues are c's own CPU time.
func (s *Sim) ttwuPending(c *cpu) {
	if len(c.wakeList) == 0 {
		return
	}
	n := int64(len(c.wakeList))
	for i, p := range c.wakeList {
		c.wakeList[i] = nil
		c.wakePending--
		s.activate(p, c, c.id, p.wakeStamp)
		if c.curr != nil && s.class.wakeupPreempt(c, p) {
			c.needResched = true
		}
	}
	c.wakeList = c.wakeList[:0]
	cost := n * s.k.Get(knob.EnqueueNS)
	if c.curr == nil {
		c.pendingOverhead += cost // before the first task it switches to
	} else {
		s.steal(c, cost)
	}
}

// activate enqueues woken task p on c (ttwu_do_activate without the
// preemption check, which the callers make: they know who pays for the
// IPI). stamp is where p's wakeup latency starts.
func (s *Sim) activate(p *Task, c *cpu, fromCPU int, stamp int64) {
	p.waking = false
	if p.measureWake {
		p.wokenAt = stamp
	}
	p.wakeups++
	migrated := p.cpu >= 0 && p.cpu != c.id
	s.o1Wake.from = fromCPU
	s.class.enqueueTaskWakeup(c, p)
	switch s.k.Get(knob.SHARED_RUNQ) {
	case knob.SharedRunqAll:
		s.srqPush(p, s.cpus[fromCPU])
	case knob.SharedRunqWakeup:
		if !migrated {
			s.srqPush(p, s.cpus[fromCPU])
		}
	}
	if c.idleStamp != 0 {
		// ttwu_do_wakeup: feed the idle period into avg_idle.
		dt := s.now - c.idleStamp
		c.avgIdle += (dt - c.avgIdle) / 8
		c.avgIdle = min(c.avgIdle, 2*c.maxIdleBalanceCost)
		if s.rules.wakeStamp {
			c.wakeStamp = s.now / s.tickNS
			c.wakeAvgIdle = c.avgIdle / 2
		}
		c.idleStamp = 0
	}
	s.class.woken(c, p) // task_woken, after ttwu_do_wakeup
}

// ttwuRunnable is try_to_wake_up's ttwu_runnable for a delayed wakee p
// (era 6.12, core.c:3756): p is still on its runqueue, so the waker, on
// CPU from as task cur, takes that runqueue's lock (__task_rq_lock,
// whatever the LLC), requeues p (enqueue_task with ENQUEUE_DELAYED) and
// runs wakeup_preempt. No select_task_rq (so no record_wakee, wake_wide or
// recent_used_cpu), no wake list; an IPI only if curr must reschedule.
// The waker reaches it at s.now+delay; it returns the waker's CPU time:
// the wakeup's wake_ns, the lock and runqueue lines and the requeue.
func (s *Sim) ttwuRunnable(p *Task, from int, cur *Task, sync bool, stamp, delay int64) int64 {
	c := s.cpus[p.cpu]
	d, _ := s.beginDecision(p, from, cur, sync)
	d.Target = c.id
	s.finishDecision(d, c.id, StageDelayed)
	at := s.now + delay
	cost := s.k.Get(knob.WakeNS) + s.k.Get(knob.EnqueueNS)
	if from != c.id {
		cost += s.writeLine(from, c, at)
	}
	if p.measureWake {
		p.wokenAt = stamp
	}
	p.wakeups++
	s.requeueDelayed(c, p)
	// An idle c holds a delayed task the balancer attached: the idle
	// class's wakeup_preempt reschedules it.
	return cost + s.wakeupPreemptFrom(c, p, from, at+cost)
}

// timerWakeup wakes t when its sleep timer fires. The timer interrupt runs
// on the CPU whose timer base holds it (where t went to sleep); that CPU
// pays for the wakeup, stolen from whatever it runs, or, if idle, first
// leaves its idle state and afterwards goes back through the governor.
func (s *Sim) timerWakeup(t *Task) {
	wc := s.cpus[t.cpu]
	cur := wc.curr
	if cur == nil {
		cur = wc.idleTask
	}
	stamp := s.now
	idle := wc.curr == nil
	exit := int64(0)
	if idle {
		exit = s.exitLatency(wc)
		s.reflectIdle(wc, exit, false, false)
	}
	var cost int64
	if t.delayed {
		cost = s.ttwuRunnable(t, wc.id, cur, false, stamp, exit)
	} else {
		d := s.class.selectTaskRq(t, wc.id, cur, false)
		target := s.cpus[d.Chosen]
		s.claimWake(target)
		pre := s.k.Get(knob.WakeNS) + d.Cost
		s.o1Wake.irq = true
		cost = pre + s.ttwuQueue(t, target, wc.id, stamp, exit+pre)
		s.o1Wake.irq = false
	}
	switch {
	case !idle:
		s.steal(wc, cost)
	case wc.curr == nil && wc.nr == 0 && wc.wakePending == 0 && !s.inTimerIRQ:
		// The wakee went elsewhere: the idle loop chooses again (after
		// the whole interrupt, when inside one: its caller does).
		s.selectIdleState(wc, wc.tickStopped)
	}
}
