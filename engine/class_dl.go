package engine

// dlStack is the class list a run with deadline tasks has: dl_sched_class
// above the classes below it (rtStack and the era's fair class, or the
// fair class alone), as for_each_class walks them (sched.h,
// DEFINE_SCHED_CLASS order). Each hook goes to the class of the task it
// is about — dl.go for SCHED_DEADLINE tasks, next for the others — and
// pick_next_task asks the deadline class first. The classes below never
// see a deadline task; cpu.dlNr is what rq->nr_running adds for them.
type dlStack struct {
	next schedClass
	s    *Sim
}

func (k dlStack) enqueueTaskNew(c *cpu, t *Task) {
	if t.dl() {
		k.s.dlEnqueueNew(c, t)
		return
	}
	before := c.nr
	k.next.enqueueTaskNew(c, t)
	k.fairEnqueued(c, t, before)
}

func (k dlStack) enqueueTaskWakeup(c *cpu, t *Task) {
	if t.dl() {
		k.s.dlEnqueueWakeup(c, t)
		return
	}
	before := c.nr
	k.next.enqueueTaskWakeup(c, t)
	k.fairEnqueued(c, t, before)
}

// fairEnqueued is enqueue_task_fair's start of the fair server (era
// 6.12) when c's fair class had no queued task before t (before is
// cfs.h_nr_queued then): the idle time so far counts for the server
// first when nothing at all ran on c.
func (k dlStack) fairEnqueued(c *cpu, t *Task, before int) {
	if c.fairServer == nil || t.rt() || before != 0 || c.nr == 0 {
		return
	}
	if c.nrRunning() == 1 && c.curr == nil {
		k.s.dlServerIdleTime(c)
	}
	k.s.dlServerStart(c)
}

func (k dlStack) detachTask(c *cpu, t *Task, payer *cpu) {
	if t.dl() {
		k.s.dlRemove(c, t.dlse)
		return
	}
	k.next.detachTask(c, t, payer)
}

func (k dlStack) attachTask(c *cpu, t *Task, payer *cpu) {
	if t.dl() {
		k.s.dlAttach(c, t, true)
		if t.dlse.throttled {
			t.cpu = c.id // its replenishment enqueues it here
			return
		}
		k.s.dlInsert(c, t.dlse)
		return
	}
	before := c.nr
	k.next.attachTask(c, t, payer)
	k.fairEnqueued(c, t, before)
}

// pushCurr moves the task c just stopped running to dst: for a deadline
// task, sched_setaffinity's migration stopper.
func (k dlStack) pushCurr(c *cpu, t *Task, dst *cpu) {
	if t.dl() {
		if t.dlse.onRQ {
			k.s.dlMove(c, dst, t)
			return
		}
		k.s.dlAttach(dst, t, true) // throttled: its replenishment enqueues it on dst
		t.cpu = dst.id
		return
	}
	k.next.pushCurr(c, t, dst)
}

func (k dlStack) pickNextTask(c *cpu) *Task {
	if t := k.s.dlPick(c); t != nil {
		return t
	}
	return k.next.pickNextTask(c)
}

// wakeupPreempt is wakeup_preempt: a deadline task preempts every lower
// class at once, and nothing of a lower class preempts a deadline curr;
// between deadline tasks, wakeup_preempt_dl.
func (k dlStack) wakeupPreempt(c *cpu, p *Task) bool {
	if decided, preempt := k.acrossClasses(c, p); decided {
		return preempt
	}
	return k.next.wakeupPreempt(c, p)
}

func (k dlStack) wakeupPreemptNew(c *cpu, p *Task) bool {
	if decided, preempt := k.acrossClasses(c, p); decided {
		return preempt
	}
	return k.next.wakeupPreemptNew(c, p)
}

// acrossClasses decides wakeup preemption when p or c's curr is a
// deadline task; decided is false otherwise (the classes below decide).
func (k dlStack) acrossClasses(c *cpu, p *Task) (decided, preempt bool) {
	if p.dl() {
		return true, k.s.dlPreempt(c, p)
	}
	if c.curr != nil && c.curr.dl() {
		return true, false
	}
	return false, false
}

// taskTick is task_tick_dl (update_curr_dl has run in the tick's
// update_curr and rescheduled what it throttled).
func (k dlStack) taskTick(c *cpu) bool {
	if c.curr.dl() {
		return false
	}
	if c.dlNr > 0 {
		// A deadline task is queued behind a lower class's curr (it was
		// replenished while that curr ran): resched_curr.
		return true
	}
	if fs := c.fairServer; fs != nil && fs.onRQ && c.dl.tree[0] == fs && !c.curr.rt() {
		// The fair task runs on behalf of its server: task_tick_fair
		// alone (an RT task queued behind it waits for the server).
		return k.s.dl.fair.taskTick(c)
	}
	return k.next.taskTick(c)
}

func (k dlStack) selectTaskRq(p *Task, this int, cur *Task, sync bool) *Decision {
	if p.dl() {
		return k.s.selectTaskRqDL(p, this, cur, sync)
	}
	return k.next.selectTaskRq(p, this, cur, sync)
}

// selectTaskRqFork places a new task. A deadline task has no deadline
// parent (SCHED_DEADLINE tasks cannot fork): it is a workload's task,
// created by a SCHED_OTHER launcher and placed by the fair class's fork
// balancing, and it becomes a deadline task when it is enqueued (rt-app
// and chrt -d call sched_setattr in the new thread).
func (k dlStack) selectTaskRqFork(t *Task, cpu int) int {
	return k.next.selectTaskRqFork(t, cpu)
}

func (k dlStack) taskFork(pc *cpu, t, parent *Task) {
	if t.dl() {
		return // task_fork_dl does nothing
	}
	k.next.taskFork(pc, t, parent)
}

func (k dlStack) balanceNewidle(c *cpu, skipLLC bool) int64 {
	return k.next.balanceNewidle(c, skipLLC)
}

func (k dlStack) rebalanceDomains(c *cpu, it idleType, payer *cpu, at int64) int64 {
	return k.next.rebalanceDomains(c, it, payer, at)
}

// enqueueEntity and dequeueEntity are the core's put-back of a preempted
// curr and take-off of the picked task: a deadline task stays on its tree
// while it runs, as in deadline.c.
func (k dlStack) enqueueEntity(c *cpu, t *Task) {
	if !t.dl() {
		k.next.enqueueEntity(c, t)
	}
}

func (k dlStack) dequeueEntity(c *cpu, t *Task) {
	if !t.dl() {
		k.next.dequeueEntity(c, t)
	}
}

func (k dlStack) updateMinVruntime(c *cpu)        { k.next.updateMinVruntime(c) }
func (k dlStack) updateDeadline(c *cpu, t *Task)  { k.next.updateDeadline(c, t) }
func (k dlStack) updateEntityLag(c *cpu, t *Task) { k.next.updateEntityLag(c, t) }

func (k dlStack) deactivateTask(t *Task, state TaskState) { k.next.deactivateTask(t, state) }

// putPrevTask is put_prev_task with the balance callbacks before the
// pick (put_prev_task_balance): a deadline task that left its tree
// (blocked, exited or throttled) makes its CPU pull deadline work
// (balance_dl), and then, with nothing of the deadline class left to
// run, RT work (balance_rt: a deadline prev's prio is below every RT
// level).
func (k dlStack) putPrevTask(prev *Task) {
	if !prev.dl() {
		k.next.putPrevTask(prev)
		return
	}
	c := k.s.cpus[prev.cpu]
	if prev.dlse.onRQ {
		return
	}
	k.s.pullDLTask(c)
	if c.dlNr == 0 && k.s.rt != nil { // need_pull_rt_task: every RT level is above -1
		k.s.pullRTTask(c)
	}
}

func (k dlStack) setNextTask(t *Task) {
	if !t.dl() {
		k.next.setNextTask(t)
	}
}

// balanceCallback runs after the switch to next: set_next_task_dl's
// deadline_queue_push_tasks.
func (k dlStack) balanceCallback(c *cpu, next *Task) {
	if next.dl() && k.s.dlHasPushable(c) {
		k.s.pushDLTasks(c)
	}
	k.next.balanceCallback(c, next)
}

// woken is the class's task_woken hook after p's wakeup enqueue on c.
func (k dlStack) woken(c *cpu, p *Task) {
	if p.dl() {
		k.s.taskWokenDL(c, p)
		return
	}
	k.next.woken(c, p)
}

func (k dlStack) taskTickIdle(c *cpu) { k.next.taskTickIdle(c) }
func (k dlStack) initRQ(c *cpu)       { k.next.initRQ(c) }

func (k dlStack) checkRQ(c *cpu) error {
	if err := k.s.checkDLRQ(c); err != nil {
		return err
	}
	return k.next.checkRQ(c)
}
