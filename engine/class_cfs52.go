package engine

import "schedplay/engine/knob"

// cfsV52 is the fair class of v5.2 (kernel/sched/fair.c at v5.2.1,
// fc4ec72d): CFS with the 2019 wakeup path (select_idle_sibling with
// SIS_PROP, and the seed patches' knobs) and the v5.2 load balancer.
type cfsV52 struct{ *Sim }

// selectTaskRq is v5.2's select_task_rq_fair for a wakeup (wakeup.go's
// selectTaskRqFair with v5.2's select_idle_sibling and fair rules).
func (s cfsV52) selectTaskRq(p *Task, this int, cur *Task, sync bool) *Decision {
	return s.selectTaskRqFair(p, this, cur, sync)
}

// pickNextTask is pick_next_entity after put_prev: the leftmost task, unless
// the last buddy (the task a wakeup preempted) or next buddy (the wakee
// that preempted) is within a wakeup granularity of it.
func (s cfsV52) pickNextTask(c *cpu) *Task {
	if len(c.tree) == 0 {
		return nil
	}
	left := c.tree[0]
	se := left
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
func (s cfsV52) wakeupPreempt(c *cpu, p *Task) bool {
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
func (s cfsV52) checkPreemptTick(c *cpu) bool {
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
func (s cfsV52) enqueueTaskNew(c *cpu, t *Task) {
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
func (s cfsV52) enqueueTaskWakeup(c *cpu, t *Task) {
	if t.cpu >= 0 && t.cpu != c.id {
		t.vruntime = t.vruntime - s.cpus[t.cpu].minVruntime + c.minVruntime
	}
	s.updateCurr(c)
	s.place(c, t, false)
	t.state = TaskRunnable
	t.cpu = c.id
	s.treeInsert(c, t)
	s.accountEnqueue(c, t)
	s.updateMinVruntimeCFS(c)
}

func (s cfsV52) rebalanceDomains(c *cpu, it idleType, payer *cpu, at int64) int64 {
	return s.rebalanceDomainsFair(c, it, payer, at)
}

func (s cfsV52) balanceNewidle(c *cpu, skipLLC bool) int64 { return s.newidleBalanceFair(c, skipLLC) }

func (s cfsV52) detachTask(c *cpu, t *Task, payer *cpu) { s.detachQueued(c, t, payer) }
func (s cfsV52) attachTask(c *cpu, t *Task, payer *cpu) { s.attachQueued(c, t, payer) }
func (s cfsV52) pushCurr(c *cpu, t *Task, dst *cpu)     { s.pushCurrQueued(c, t, dst) }
func (s cfsV52) selectTaskRqFork(t *Task, cpu int) int  { return s.findIdlestCPU(t, cpu) }
func (s cfsV52) taskFork(pc *cpu, t, parent *Task)      { s.forkVruntime(pc, t, parent) }
func (s cfsV52) wakeupPreemptNew(c *cpu, p *Task) bool  { return s.wakeupPreempt(c, p) }

// taskTick is task_tick_fair's check_preempt_tick, when curr has company.
func (s cfsV52) taskTick(c *cpu) bool {
	return c.nr > 1 && c.curr.state == TaskRunning && !c.needResched && s.checkPreemptTick(c)
}

func (s cfsV52) enqueueEntity(c *cpu, t *Task)       { s.treeInsert(c, t) }
func (s cfsV52) dequeueEntity(c *cpu, t *Task)       { s.treeRemove(c, t) }
func (s cfsV52) updateMinVruntime(c *cpu)            { s.updateMinVruntimeCFS(c) }
func (s cfsV52) updateDeadline(c *cpu, t *Task)      {} // CFS has no deadline
func (s cfsV52) updateEntityLag(c *cpu, t *Task)     {} // nor lag
func (s cfsV52) deactivateTask(t *Task, _ TaskState) {}
func (s cfsV52) putPrevTask(prev *Task)              {}
func (s cfsV52) setNextTask(t *Task)                 {}
func (s cfsV52) taskTickIdle(c *cpu)                 {}
func (s cfsV52) initRQ(c *cpu)                       {}
func (s cfsV52) checkRQ(c *cpu) error                { return s.checkTreeOrder(c) }
