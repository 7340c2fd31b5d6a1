package engine

import "schedplay/engine/knob"

// cfs is CFS, the fair class from v2.6.23 to 6.5: the vruntime tree with
// its buddies, sleeper credit and start debit, check_preempt_tick and
// wakeup granularity, as read at v5.2.1 (kernel/sched/fair.c, fc4ec72d)
// and checked against 6.1 (Debian's linux-source-6.1). Era 5.2 runs it
// with the 2019 wakeup path (select_idle_sibling with SIS_PROP, and the
// seed patches' knobs) and the v5.2 load balancer; era 6.1 with the v6.x
// wakeup path and the v5.5+ balancer (the era's fairRules, class.go).
type cfs struct{ *Sim }

// selectTaskRq is v5.2's select_task_rq_fair for a wakeup (wakeup.go's
// selectTaskRqFair with v5.2's select_idle_sibling and fair rules).
func (s cfs) selectTaskRq(p *Task, this int, cur *Task, sync bool) *Decision {
	return s.selectTaskRqFair(p, this, cur, sync)
}

// pickNextTask is pick_next_entity after put_prev: the leftmost task, unless
// it is the skip buddy (it yielded) and the second is close enough, or the
// last buddy (the task a wakeup preempted) or next buddy (the wakee that
// preempted) is within a wakeup granularity of it.
func (s cfs) pickNextTask(c *cpu) *Task {
	if len(c.tree) == 0 {
		return nil
	}
	left := c.tree[0]
	se := left
	// Avoid running the skip buddy (the task that yielded) if the next
	// one is within a wakeup granularity of it (v5.2 pick_next_entity).
	if c.skipBuddy == left && len(c.tree) > 1 && s.wakeupPreemptLatency(c.tree[1], left) < 1 {
		se = c.tree[1]
	}
	// pick_next_entity calls the same wakeup_preempt_entity as wakeup
	// preemption, so LN_PREEMPT's offsets also decide the buddies.
	if c.lastBuddy != nil && c.lastBuddy.state == TaskRunnable && c.lastBuddy.cpu == c.id &&
		s.wakeupPreemptLatency(c.lastBuddy, left) < 1 {
		se = c.lastBuddy
	}
	if c.nextBuddy != nil && c.nextBuddy.state == TaskRunnable && c.nextBuddy.cpu == c.id &&
		s.wakeupPreemptLatency(c.nextBuddy, left) < 1 {
		se = c.nextBuddy
	}
	return se
}

// wakeupPreempt is v5.2's check_preempt_wakeup for a task p just enqueued on
// busy CPU c. It reports whether curr must be rescheduled.
func (s cfs) wakeupPreempt(c *cpu, p *Task) bool {
	curr := c.curr
	if curr == nil {
		return true
	}
	if curr == p || c.needResched || curr.state != TaskRunning {
		return false
	}
	if !s.k.On(knob.WAKEUP_PREEMPTION) {
		return false
	}
	s.settle(c)
	s.updateCurr(c)
	if s.wakeupPreemptLatency(curr, p) == 1 {
		c.nextBuddy = p
		// LAST_BUDDY: with many tasks queued, try to give the CPU back to
		// the preempted task next.
		if int64(c.nr) >= s.nrLatency {
			c.lastBuddy = curr
		}
		return true
	}
	return false
}

// checkPreemptTick is check_preempt_tick.
func (s cfs) checkPreemptTick(c *cpu) bool {
	curr := c.curr
	ideal := s.schedSlice(c, curr, true)
	ran := curr.sumExec - curr.prevSumExec
	if ran > ideal {
		s.clearBuddies(c, curr)
		return true
	}
	if ran < s.minGranNS || len(c.tree) == 0 {
		return false
	}
	d := curr.vruntime - c.tree[0].vruntime
	if s.k.On(knob.LN_PREEMPT) {
		// Patch 5/8 of the latency-nice series: the leftmost task's
		// latency offset relative to curr's shifts the test, and curr is
		// also rescheduled once it is get_latency_max ahead.
		if d < s.wakeupLatencyGran(curr, c.tree[0]) {
			return false
		}
		return d > ideal || d > s.latencyMax()
	}
	return d > ideal
}

// enqueueTaskNew puts a freshly forked task on c (wake_up_new_task →
// enqueue_entity without ENQUEUE_WAKEUP): t.vruntime arrives normalised by
// taskFork and is made absolute on c after update_curr, as the kernel
// renormalises every non-wakeup enqueue.
func (s cfs) enqueueTaskNew(c *cpu, t *Task) {
	s.updateCurr(c)
	t.vruntime += c.minVruntime
	t.state = TaskRunnable
	t.cpu = c.id
	s.treeInsert(c, t)
	s.accountEnqueue(c, t)
	if s.k.Get(knob.SHARED_RUNQ) == knob.SharedRunqAll {
		s.srqPush(t, c)
	}
}

// enqueueTaskWakeup puts a woken task on c, renormalising its vruntime if it
// changed runqueue and giving it sleeper credit.
func (s cfs) enqueueTaskWakeup(c *cpu, t *Task) {
	// A wakee that changed CPU left its old runqueue's min_vruntime
	// (migrate_task_rq_fair) and is renormalised to this one's after
	// update_curr, "such that we're placed at the current moment in time,
	// instead of some piece of the past" (enqueue_entity with
	// ENQUEUE_MIGRATED, v5.2 and 6.1 fair.c).
	migrated := t.cpu >= 0 && t.cpu != c.id
	if migrated {
		t.vruntime -= s.cpus[t.cpu].minVruntime
	}
	s.updateCurr(c)
	if migrated {
		t.vruntime += c.minVruntime
	}
	s.place(c, t, false)
	t.state = TaskRunnable
	t.cpu = c.id
	s.treeInsert(c, t)
	s.accountEnqueue(c, t)
	s.updateMinVruntimeCFS(c)
}

func (s cfs) rebalanceDomains(c *cpu, it idleType, payer *cpu, at int64) int64 {
	return s.rebalanceDomainsFair(c, it, payer, at)
}

func (s cfs) balanceNewidle(c *cpu, skipLLC bool) int64 { return s.newidleBalanceFair(c, skipLLC) }

func (s cfs) detachTask(c *cpu, t *Task, payer *cpu) { s.detachQueued(c, t, payer) }
func (s cfs) attachTask(c *cpu, t *Task, payer *cpu) { s.attachQueued(c, t, payer) }
func (s cfs) pushCurr(c *cpu, t *Task, dst *cpu)     { s.pushCurrQueued(c, t, dst) }
func (s cfs) selectTaskRqFork(t *Task, cpu int) int  { return s.findIdlestCPU(t, cpu) }
func (s cfs) taskFork(pc *cpu, t, parent *Task)      { s.forkVruntime(pc, t, parent) }
func (s cfs) wakeupPreemptNew(c *cpu, p *Task) bool  { return s.wakeupPreempt(c, p) }

// taskTick is task_tick_fair's check_preempt_tick, when curr has company.
func (s cfs) taskTick(c *cpu) bool {
	return c.nr > 1 && c.curr.state == TaskRunning && !c.needResched && s.checkPreemptTick(c)
}

func (s cfs) enqueueEntity(c *cpu, t *Task)       { s.treeInsert(c, t) }
func (s cfs) dequeueEntity(c *cpu, t *Task)       { s.treeRemove(c, t) }
func (s cfs) updateMinVruntime(c *cpu)            { s.updateMinVruntimeCFS(c) }
func (s cfs) updateDeadline(c *cpu, t *Task)      {} // CFS has no deadline
func (s cfs) updateEntityLag(c *cpu, t *Task)     {} // nor lag
func (s cfs) deactivateTask(t *Task, _ TaskState) {}
func (s cfs) putPrevTask(prev *Task)              {}
func (s cfs) setNextTask(t *Task)                 {}
func (s cfs) taskTickIdle(c *cpu)                 {}
func (s cfs) initRQ(c *cpu)                       {}
func (s cfs) checkRQ(c *cpu) error                { return s.checkTreeOrder(c) }

func (s cfs) balanceCallback(c *cpu, next *Task) {}
func (s cfs) woken(c *cpu, p *Task)              {}
