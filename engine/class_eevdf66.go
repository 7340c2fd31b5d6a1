package engine

// eevdfV66 is the fair class of v6.6 (kernel/sched/fair.c at v6.6): EEVDF
// (eevdf.go), the v6.6 wakeup path with SIS_UTIL (wakeup66.go) and the
// v5.5+ load balancer (balance66.go), whose find_idlest_group places forks
// (balance_fork.go).
type eevdfV66 struct{ *Sim }

func (s eevdfV66) enqueueTaskNew(c *cpu, t *Task)    { s.enqueueNewEEVDF(c, t, false) }
func (s eevdfV66) enqueueTaskWakeup(c *cpu, t *Task) { s.enqueueWakeupEEVDF(c, t) }
func (s eevdfV66) detachTask(c *cpu, t *Task, payer *cpu) {
	s.detachQueuedEEVDF(c, t, payer)
}
func (s eevdfV66) attachTask(c *cpu, t *Task, payer *cpu) {
	s.attachQueuedEEVDF(c, t, payer)
}
func (s eevdfV66) pushCurr(c *cpu, t *Task, dst *cpu) { s.pushCurrEEVDF(c, t, dst) }
func (s eevdfV66) pickNextTask(c *cpu) *Task          { return s.pickNext66(c) }
func (s eevdfV66) wakeupPreempt(c *cpu, p *Task) bool {
	return s.checkPreemptWakeupEEVDF(c, p, false)
}

// wakeupPreemptNew: WF_FORK sets no next buddy.
func (s eevdfV66) wakeupPreemptNew(c *cpu, p *Task) bool {
	return s.checkPreemptWakeupEEVDF(c, p, true)
}

// taskTick: v6.6 has no check_preempt_tick; update_curr's
// update_deadline reschedules.
func (s eevdfV66) taskTick(c *cpu) bool { return false }

func (s eevdfV66) selectTaskRq(p *Task, this int, cur *Task, sync bool) *Decision {
	return s.selectTaskRqFair(p, this, cur, sync)
}
func (s eevdfV66) selectTaskRqFork(t *Task, cpu int) int { return s.findIdlestCPU(t, cpu) }
func (s eevdfV66) taskFork(pc *cpu, t, parent *Task)     { s.forkVruntime66(pc, t, parent) }
func (s eevdfV66) balanceNewidle(c *cpu, skipLLC bool) int64 {
	return s.newidleBalanceFair(c, skipLLC)
}
func (s eevdfV66) rebalanceDomains(c *cpu, it idleType, payer *cpu, at int64) int64 {
	return s.rebalanceDomainsFair(c, it, payer, at)
}

func (s eevdfV66) enqueueEntity(c *cpu, t *Task)       { s.treeInsert66(c, t) }
func (s eevdfV66) dequeueEntity(c *cpu, t *Task)       { s.treeRemove66(c, t) }
func (s eevdfV66) updateMinVruntime(c *cpu)            { s.updateMinVruntime66(c) }
func (s eevdfV66) updateDeadline(c *cpu, t *Task)      { s.Sim.updateDeadline(c, t) }
func (s eevdfV66) updateEntityLag(c *cpu, t *Task)     { s.Sim.updateEntityLag(c, t) }
func (s eevdfV66) deactivateTask(t *Task, _ TaskState) {}
func (s eevdfV66) putPrevTask(prev *Task)              {}
func (s eevdfV66) setNextTask(t *Task)                 {}
func (s eevdfV66) taskTickIdle(c *cpu)                 {}
func (s eevdfV66) initRQ(c *cpu)                       {}
func (s eevdfV66) checkRQ(c *cpu) error {
	if err := s.checkTreeOrder(c); err != nil {
		return err
	}
	return s.checkEEVDF(c)
}

func (s eevdfV66) balanceCallback(c *cpu, next *Task) {}
func (s eevdfV66) woken(c *cpu, p *Task)              {}
