package engine

// o1V267 is the 2.6.7 O(1) scheduler (kernel/sched.c of 2.6.7, the kernel
// of the 2004 SMT-nice machine: o1.go, o1_balance.go), a class that owns
// the whole runqueue, as it did before classes existed. Queued tasks move
// between CPUs with the same tree bookkeeping as v5.2's (their vruntime is
// kept but never read).
type o1V267 struct{ *Sim }

func (s o1V267) enqueueTaskNew(c *cpu, t *Task)            { s.o1EnqueueNew(c, t) }
func (s o1V267) enqueueTaskWakeup(c *cpu, t *Task)         { s.o1Activate(c, t) }
func (s o1V267) detachTask(c *cpu, t *Task, payer *cpu)    { s.detachQueued(c, t, payer) }
func (s o1V267) attachTask(c *cpu, t *Task, payer *cpu)    { s.attachQueued(c, t, payer) }
func (s o1V267) pushCurr(c *cpu, t *Task, dst *cpu)        { s.pushCurrQueued(c, t, dst) }
func (s o1V267) pickNextTask(c *cpu) *Task                 { return s.o1Pick(c) }
func (s o1V267) wakeupPreempt(c *cpu, p *Task) bool        { return s.o1PreemptWakeup(c, p) }
func (s o1V267) balanceNewidle(c *cpu, skipLLC bool) int64 { return s.o1IdleBalance(c) }

// wakeupPreemptNew: wake_up_forked_process makes no preemption check.
func (s o1V267) wakeupPreemptNew(c *cpu, p *Task) bool { return false }

// taskTick is scheduler_tick's part for a running task: the load
// average, then the timeslice.
func (s o1V267) taskTick(c *cpu) bool {
	s.o1UpdateLoad(c)
	return c.curr.state == TaskRunning && s.o1Tick(c)
}

func (s o1V267) selectTaskRq(p *Task, this int, cur *Task, sync bool) *Decision {
	return s.o1SelectTaskRq(p, this, cur, sync)
}

// selectTaskRqFork: 2.6.7 wakes a forked task on the CPU the fork ran on.
func (s o1V267) selectTaskRqFork(t *Task, cpu int) int {
	if t.allowed.Test(cpu) {
		return cpu
	}
	return s.fallbackCPU(t, cpu)
}

// taskFork: sched_fork's priority and sleep average, then the tree
// bookkeeping v5.2 shares.
func (s o1V267) taskFork(pc *cpu, t, parent *Task) {
	s.o1InitTask(t, parent)
	s.forkVruntime(pc, t, parent)
}

func (s o1V267) rebalanceDomains(c *cpu, it idleType, payer *cpu, at int64) int64 {
	return s.o1RebalanceTick(c, it)
}

func (s o1V267) enqueueEntity(c *cpu, t *Task)           { s.o1TreeInsert(c, t) }
func (s o1V267) dequeueEntity(c *cpu, t *Task)           { s.treeRemove(c, t) }
func (s o1V267) updateMinVruntime(c *cpu)                { s.updateMinVruntimeCFS(c) }
func (s o1V267) updateDeadline(c *cpu, t *Task)          {}
func (s o1V267) updateEntityLag(c *cpu, t *Task)         {}
func (s o1V267) deactivateTask(t *Task, state TaskState) { s.o1Deactivate(t, state) }
func (s o1V267) putPrevTask(prev *Task)                  { s.o1ChargePrev(prev) }
func (s o1V267) setNextTask(t *Task)                     { s.o1SetNext(t) }
func (s o1V267) taskTickIdle(c *cpu)                     { s.o1UpdateLoad(c) }
func (s o1V267) initRQ(c *cpu)                           { s.o1InitRQ(c) }
func (s o1V267) checkRQ(c *cpu) error                    { return s.o1CheckRQ(c) }

func (s o1V267) balanceCallback(c *cpu, next *Task) {}
func (s o1V267) woken(c *cpu, p *Task)              {}
