package engine

// rtStack is the class list a run with RT tasks has: rt_sched_class above
// the era's fair class, as for_each_class walks them (sched.h,
// DEFINE_SCHED_CLASS order). Each hook goes to the class of the task it
// is about — rt.go for SCHED_FIFO/SCHED_RR tasks, the era's class for
// the others — and pick_next_task asks the RT class first. The fair
// class never sees an RT task: its trees, counts, load sums and
// balancers hold fair tasks only, and cpu.rtNr is what rq->nr_running
// adds for RT (cpu.nrRunning).
type rtStack struct {
	fair schedClass
	s    *Sim
}

func (k rtStack) enqueueTaskNew(c *cpu, t *Task) {
	if t.rt() {
		k.s.rtEnqueue(c, t, false)
		return
	}
	k.fair.enqueueTaskNew(c, t)
}

func (k rtStack) enqueueTaskWakeup(c *cpu, t *Task) {
	if t.rt() {
		k.s.rtEnqueue(c, t, false)
		return
	}
	k.fair.enqueueTaskWakeup(c, t)
}

func (k rtStack) detachTask(c *cpu, t *Task, payer *cpu) {
	if t.rt() {
		k.s.rtDequeue(c, t)
		return
	}
	k.fair.detachTask(c, t, payer)
}

func (k rtStack) attachTask(c *cpu, t *Task, payer *cpu) {
	if t.rt() {
		k.s.rtEnqueue(c, t, false)
		return
	}
	k.fair.attachTask(c, t, payer)
}

// pushCurr moves the task c just stopped running to dst: the fair
// balancer's active balance, or (for an RT task) sched_setaffinity's
// migration stopper.
func (k rtStack) pushCurr(c *cpu, t *Task, dst *cpu) {
	if t.rt() {
		k.s.rtMove(c, dst, t)
		return
	}
	k.fair.pushCurr(c, t, dst)
}

func (k rtStack) pickNextTask(c *cpu) *Task {
	if t := k.s.rtPick(c); t != nil {
		return t
	}
	return k.fair.pickNextTask(c)
}

// wakeupPreempt is wakeup_preempt: a task of a higher class preempts at
// once, one of a lower class never; within the RT class, wakeup_preempt_rt.
func (k rtStack) wakeupPreempt(c *cpu, p *Task) bool {
	if decided, preempt := k.acrossClasses(c, p); decided {
		return preempt
	}
	return k.fair.wakeupPreempt(c, p)
}

func (k rtStack) wakeupPreemptNew(c *cpu, p *Task) bool {
	if decided, preempt := k.acrossClasses(c, p); decided {
		return preempt
	}
	return k.fair.wakeupPreemptNew(c, p)
}

// acrossClasses decides wakeup preemption when p or c's curr is an RT
// task; decided is false when both are fair (the fair class decides).
func (k rtStack) acrossClasses(c *cpu, p *Task) (decided, preempt bool) {
	if p.rt() {
		return true, k.s.rtPreempt(c, p)
	}
	if c.curr != nil && c.curr.rt() {
		return true, false
	}
	return false, false
}

func (k rtStack) taskTick(c *cpu) bool {
	if c.curr.rt() {
		return k.s.rtTick(c)
	}
	if c.rtNr > 0 {
		// An RT task is queued behind a fair curr (woken while the CPU
		// was throttled and since unthrottled): resched_curr.
		return true
	}
	return k.fair.taskTick(c)
}

func (k rtStack) selectTaskRq(p *Task, this int, cur *Task, sync bool) *Decision {
	if p.rt() {
		return k.s.selectTaskRqRT(p, this, cur, sync)
	}
	return k.fair.selectTaskRq(p, this, cur, sync)
}

// selectTaskRqFork places a new task. A child of an RT task inherits its
// policy and is placed by select_task_rq_rt with WF_FORK from the
// parent's CPU (the child's task_cpu). A task a workload creates is the
// child of a SCHED_OTHER launcher that sets its policy afterwards, as
// chrt does before exec and cyclictest and rt-app do in each new thread
// (pthread_create, then sched_setscheduler): it is placed by the fair
// class's fork balancing, and becomes RT when it is enqueued (the
// moment it would run as SCHED_OTHER before its first sched_setscheduler
// is not simulated).
func (k rtStack) selectTaskRqFork(t *Task, cpu int) int {
	if t.rt() && t.rtParent {
		t.cpu = cpu
		c, _ := k.s.selectRTCPU(t, cpu, nil)
		return c
	}
	return k.fair.selectTaskRqFork(t, cpu)
}

func (k rtStack) taskFork(pc *cpu, t, parent *Task) {
	if t.rt() {
		return // rt_sched_class has no task_fork
	}
	k.fair.taskFork(pc, t, parent)
}

func (k rtStack) balanceNewidle(c *cpu, skipLLC bool) int64 {
	return k.fair.balanceNewidle(c, skipLLC)
}

func (k rtStack) rebalanceDomains(c *cpu, it idleType, payer *cpu, at int64) int64 {
	return k.fair.rebalanceDomains(c, it, payer, at)
}

// enqueueEntity and dequeueEntity are the core's put-back of a preempted
// curr and take-off of the picked task: an RT task stays on its array
// while it runs, as in rt.c.
func (k rtStack) enqueueEntity(c *cpu, t *Task) {
	if !t.rt() {
		k.fair.enqueueEntity(c, t)
	}
}

func (k rtStack) dequeueEntity(c *cpu, t *Task) {
	if !t.rt() {
		k.fair.dequeueEntity(c, t)
	}
}

func (k rtStack) updateMinVruntime(c *cpu)        { k.fair.updateMinVruntime(c) }
func (k rtStack) updateDeadline(c *cpu, t *Task)  { k.fair.updateDeadline(c, t) }
func (k rtStack) updateEntityLag(c *cpu, t *Task) { k.fair.updateEntityLag(c, t) }

func (k rtStack) deactivateTask(t *Task, state TaskState) { k.fair.deactivateTask(t, state) }

// putPrevTask is put_prev_task with balance_rt before it: an RT task that
// stopped running (blocked or exited) leaves its CPU at a lower priority,
// which then pulls RT work from overloaded CPUs.
func (k rtStack) putPrevTask(prev *Task) {
	if !prev.rt() {
		k.fair.putPrevTask(prev)
		return
	}
	c := k.s.cpus[prev.cpu]
	if prev.state != TaskRunning && c.rt.highest() > prev.kprio() {
		k.s.pullRTTask(c)
	}
}

func (k rtStack) setNextTask(t *Task) {
	if !t.rt() {
		k.fair.setNextTask(t)
	}
}

// balanceCallback runs after the switch to next (the balance callbacks
// __schedule queues): set_next_task_rt's rt_queue_push_tasks.
func (k rtStack) balanceCallback(c *cpu, next *Task) {
	if next.rt() && c.rt.nrTotal > 1 {
		k.s.pushRTTasks(c)
	}
	k.fair.balanceCallback(c, next)
}

// woken is the class's task_woken hook after p's wakeup enqueue on c.
func (k rtStack) woken(c *cpu, p *Task) {
	if p.rt() {
		k.s.taskWokenRT(c, p)
	}
}

func (k rtStack) taskTickIdle(c *cpu) { k.fair.taskTickIdle(c) }
func (k rtStack) initRQ(c *cpu)       { k.fair.initRQ(c) }

func (k rtStack) checkRQ(c *cpu) error {
	if err := k.s.checkRTRQ(c); err != nil {
		return err
	}
	return k.fair.checkRQ(c)
}
