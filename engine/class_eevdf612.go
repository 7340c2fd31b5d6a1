package engine

// eevdfV612 is the fair class of 6.12 (Debian's 6.12.117): EEVDF with
// delayed dequeue, per-task slices, PREEMPT_SHORT and PLACE_REL_DEADLINE
// (eevdf612.go), 6.6's wakeup path without SIS_PROP (wakeup66.go) and the
// v5.5+ load balancer (balance66.go).
type eevdfV612 struct{ *Sim }

func (s eevdfV612) enqueueTaskNew(c *cpu, t *Task)    { s.enqueueNewEEVDF(c, t, true) }
func (s eevdfV612) enqueueTaskWakeup(c *cpu, t *Task) { s.enqueueWakeupEEVDF(c, t) }
func (s eevdfV612) detachTask(c *cpu, t *Task, payer *cpu) {
	s.detachQueuedEEVDF(c, t, payer)
}
func (s eevdfV612) attachTask(c *cpu, t *Task, payer *cpu) {
	s.attachQueuedEEVDF(c, t, payer)
}
func (s eevdfV612) pushCurr(c *cpu, t *Task, dst *cpu) { s.pushCurrEEVDF(c, t, dst) }
func (s eevdfV612) pickNextTask(c *cpu) *Task          { return s.pickNext612(c) }
func (s eevdfV612) wakeupPreempt(c *cpu, p *Task) bool {
	return s.checkPreemptWakeupEEVDF(c, p, false)
}
func (s eevdfV612) wakeupPreemptNew(c *cpu, p *Task) bool {
	return s.checkPreemptWakeupEEVDF(c, p, true)
}

// taskTick: as in 6.6, update_curr reschedules (updateDeadline612).
func (s eevdfV612) taskTick(c *cpu) bool { return false }

func (s eevdfV612) selectTaskRq(p *Task, this int, cur *Task, sync bool) *Decision {
	return s.selectTaskRqFair(p, this, cur, sync)
}
func (s eevdfV612) selectTaskRqFork(t *Task, cpu int) int { return s.findIdlestCPU(t, cpu) }
func (s eevdfV612) taskFork(pc *cpu, t, parent *Task)     { s.fork612(t, parent) }
func (s eevdfV612) balanceNewidle(c *cpu, skipLLC bool) int64 {
	return s.newidleBalanceFair(c, skipLLC)
}
func (s eevdfV612) rebalanceDomains(c *cpu, it idleType, payer *cpu, at int64) int64 {
	return s.rebalanceDomainsFair(c, it, payer, at)
}

func (s eevdfV612) enqueueEntity(c *cpu, t *Task)       { s.treeInsert66(c, t) }
func (s eevdfV612) dequeueEntity(c *cpu, t *Task)       { s.treeRemove66(c, t) }
func (s eevdfV612) updateMinVruntime(c *cpu)            { s.updateMinVruntime66(c) }
func (s eevdfV612) updateDeadline(c *cpu, t *Task)      { s.updateDeadline612(c, t) }
func (s eevdfV612) updateEntityLag(c *cpu, t *Task)     { s.Sim.updateEntityLag(c, t) }
func (s eevdfV612) deactivateTask(t *Task, _ TaskState) {}
func (s eevdfV612) putPrevTask(prev *Task)              {}
func (s eevdfV612) setNextTask(t *Task)                 {}
func (s eevdfV612) taskTickIdle(c *cpu)                 {}
func (s eevdfV612) initRQ(c *cpu)                       {}
func (s eevdfV612) checkRQ(c *cpu) error {
	if err := s.checkTreeOrder(c); err != nil {
		return err
	}
	return s.checkEEVDF(c)
}

func (s eevdfV612) balanceCallback(c *cpu, next *Task) {}
func (s eevdfV612) woken(c *cpu, p *Task)              {}
