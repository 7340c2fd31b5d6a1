package engine

import (
	"schedplay/engine/knob"
)

// The CFS fair class as in v5.2 (kernel-reference.md §2.1–2.4): vruntime,
// min_vruntime, sleeper placement, START_DEBIT, wakeup preemption with the
// scaled wakeup granularity, tick preemption against the ideal slice, and
// next/last buddies.

// niceToWeight is the kernel's sched_prio_to_weight table, nice -20..19.
var niceToWeight = [40]int64{
	88761, 71755, 56483, 46273, 36291,
	29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906,
	3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423,
	335, 272, 215, 172, 137,
	110, 87, 70, 56, 45,
	36, 29, 23, 18, 15,
}

// NiceToWeight returns the load weight of a nice value (-20..19).
func NiceToWeight(nice int) int64 { return niceToWeight[nice+20] }

const nice0Load = 1024

// calcDeltaFair converts wall time to virtual time for weight w.
func calcDeltaFair(delta, w int64) int64 {
	if w == nice0Load {
		return delta
	}
	return delta * nice0Load / w
}

// updateCurr charges curr for the time since its exec_start.
func (s *Sim) updateCurr(c *cpu) {
	t := c.curr
	if t == nil {
		return
	}
	delta := s.now - t.execStart
	if delta <= 0 {
		return
	}
	t.execStart = s.now
	t.sumExec += delta
	s.chargeO1Slice(t, delta)
	if t.state == TaskRunning {
		t.vruntime += calcDeltaFair(delta, t.weight)
		s.updateMinVruntime(c)
	}
}

// updateMinVruntime keeps min_vruntime monotonic, following the smaller of
// curr and the leftmost queued task.
func (s *Sim) updateMinVruntime(c *cpu) {
	v := c.minVruntime
	curr := c.curr
	haveCurr := curr != nil && curr.state == TaskRunning
	if haveCurr {
		v = curr.vruntime
	}
	if len(c.tree) > 0 {
		l := c.tree[0].vruntime
		if !haveCurr || l < v {
			v = l
		}
	}
	if v > c.minVruntime {
		c.minVruntime = v
	}
}

// entityBefore orders the tree: vruntime, then task id for determinism.
func entityBefore(a, b *Task) bool {
	if a.vruntime != b.vruntime {
		return a.vruntime < b.vruntime
	}
	return a.ID < b.ID
}

func (s *Sim) treeInsert(c *cpu, t *Task) {
	i := len(c.tree)
	c.tree = append(c.tree, nil)
	for i > 0 && entityBefore(t, c.tree[i-1]) {
		c.tree[i] = c.tree[i-1]
		i--
	}
	c.tree[i] = t
	s.updateConservation(c)
}

func (s *Sim) treeRemove(c *cpu, t *Task) {
	for i, x := range c.tree {
		if x == t {
			copy(c.tree[i:], c.tree[i+1:])
			c.tree[len(c.tree)-1] = nil
			c.tree = c.tree[:len(c.tree)-1]
			s.updateConservation(c)
			return
		}
	}
	panic("engine: task not on its runqueue tree: " + t.Name)
}

// schedPeriod is __sched_period.
func (s *Sim) schedPeriod(nr int64) int64 {
	if nr > s.nrLatency {
		return nr * s.minGranNS
	}
	return s.latencyNS
}

// schedSlice is sched_slice: t's share of the period on c.
func (s *Sim) schedSlice(c *cpu, t *Task, onRq bool) int64 {
	nr := int64(c.nr)
	load := c.loadWeight
	if !onRq {
		nr++
		load += t.weight
	}
	if load == 0 {
		return s.schedPeriod(nr)
	}
	return s.schedPeriod(nr) * t.weight / load
}

// place is place_entity: new tasks start a vslice late (START_DEBIT),
// sleepers get up to half a latency of credit (GENTLE_FAIR_SLEEPERS).
func (s *Sim) place(c *cpu, t *Task, initial bool) {
	v := c.minVruntime
	if initial && s.k.On(knob.START_DEBIT) {
		v += calcDeltaFair(s.schedSlice(c, t, false), t.weight)
	}
	if !initial {
		thresh := s.latencyNS
		if s.k.On(knob.GENTLE_FAIR_SLEEPERS) {
			thresh /= 2
		}
		v -= thresh
	}
	t.vruntime = max(t.vruntime, v)
}

// accountEnqueue adds t to c's counts and load sums.
func (s *Sim) accountEnqueue(c *cpu, t *Task) {
	c.nr++
	c.loadWeight += t.weight
	t.load.set(s.now, t.weight)
	c.runnableLoad.add(s.now, t.load.at(s.now), t.weight)
	s.attachLoad(c, t)
	c.loadAvg.add(s.now, 0, t.weight)
	s.cfsListAdd(t)
	if c.nr >= 2 {
		s.overloaded = true
	}
	s.updateConservation(c)
}

// accountDequeue removes t from c's counts and load sums.
func (s *Sim) accountDequeue(c *cpu, t *Task) {
	c.nr--
	c.loadWeight -= t.weight
	c.runnableLoad.add(s.now, -t.load.at(s.now), -t.weight)
	c.loadAvg.add(s.now, 0, -t.weight)
	t.load.set(s.now, 0)
	s.updateConservation(c)
}

// attachLoad moves t's load average to c's load_avg if it is attached
// elsewhere (migrate_task_rq_fair's remove_entity_load_avg, then
// attach_entity_load_avg on the new runqueue).
func (s *Sim) attachLoad(c *cpu, t *Task) {
	if t.loadCPU == c.id {
		return
	}
	l := t.load.at(s.now)
	if t.loadCPU >= 0 {
		s.cpus[t.loadCPU].loadAvg.add(s.now, -l, 0)
	}
	c.loadAvg.add(s.now, l, 0)
	t.loadCPU = c.id
}

// detachLoad removes an exiting task's load from the CPU it is attached to.
func (s *Sim) detachLoad(t *Task) {
	if t.loadCPU >= 0 {
		s.cpus[t.loadCPU].loadAvg.add(s.now, -t.load.at(s.now), 0)
		t.loadCPU = -1
	}
}

// enqueueNew puts a freshly forked task on c (wake_up_new_task).
func (s *Sim) enqueueNew(c *cpu, t *Task) {
	s.updateCurr(c)
	s.place(c, t, true)
	t.state = TaskRunnable
	t.cpu = c.id
	s.treeInsert(c, t)
	s.accountEnqueue(c, t)
	if s.k.Get(knob.SHARED_RUNQ) == knob.SharedRunqAll {
		s.srqPush(t, c)
	}
}

// enqueueWakeup puts a woken task on c, renormalising its vruntime if it
// changed runqueue and giving it sleeper credit.
func (s *Sim) enqueueWakeup(c *cpu, t *Task) {
	if t.cpu >= 0 && t.cpu != c.id {
		t.vruntime = t.vruntime - s.cpus[t.cpu].minVruntime + c.minVruntime
	}
	s.updateCurr(c)
	s.place(c, t, false)
	t.state = TaskRunnable
	t.cpu = c.id
	s.treeInsert(c, t)
	s.accountEnqueue(c, t)
	s.updateMinVruntime(c)
}

// dequeueCurr takes curr off the runqueue because it blocks or exits; c.curr
// keeps pointing at it until schedule() switches away.
func (s *Sim) dequeueCurr(c *cpu, t *Task, state TaskState) {
	s.settle(c)
	s.updateCurr(c)
	s.clearBuddies(c, t)
	s.accountDequeue(c, t)
	if state == TaskExited {
		s.detachLoad(t)
	}
	t.state = state
	t.util.set(s.now, 0)
	s.updateMinVruntime(c)
}

// detachQueued removes a queued (not running) task from c for migration,
// normalising its vruntime to be relative to c's min_vruntime. payer is the
// CPU doing the migration.
func (s *Sim) detachQueued(c *cpu, t *Task, payer *cpu) {
	s.srqRemove(t, payer)
	s.treeRemove(c, t)
	s.clearBuddies(c, t)
	s.accountDequeue(c, t)
	t.vruntime -= c.minVruntime
	s.updateMinVruntime(c)
}

// attachQueued enqueues a migrated task on c.
func (s *Sim) attachQueued(c *cpu, t *Task, payer *cpu) {
	s.updateCurr(c)
	t.vruntime += c.minVruntime
	t.state = TaskRunnable
	t.cpu = c.id
	s.treeInsert(c, t)
	s.accountEnqueue(c, t)
	if s.k.Get(knob.SHARED_RUNQ) == knob.SharedRunqAll {
		s.srqPush(t, payer)
	}
}

// wakeupPreemptEntity is wakeup_preempt_entity: 1 when se leads curr by
// more than the wakeup granularity (in se's virtual time), -1 when it does
// not lead at all, 0 in between.
func (s *Sim) wakeupPreemptEntity(curr, se *Task) int {
	vdiff := curr.vruntime - se.vruntime
	if vdiff <= 0 {
		return -1
	}
	if vdiff > calcDeltaFair(s.wakeupGranNS, se.weight) {
		return 1
	}
	return 0
}

// wakeupPreemptLatency is the wakeup-preemption test, with LN_PREEMPT's
// latency-nice bias: the vruntime lead a wakee needs shrinks by
// sched_latency/20 per step its latency-nice is below the current task's
// (and grows when above), so -20 against 0 lends a whole latency. The
// scale follows Vincent Guittot's latency offset (latency_nice ×
// sched_latency / 20); applied to both signs as PeterZ described.
func (s *Sim) wakeupPreemptLatency(curr, p *Task) int {
	if !s.k.On(knob.LN_PREEMPT) {
		return s.wakeupPreemptEntity(curr, p)
	}
	bias := int64(curr.LatencyNice-p.LatencyNice) * s.latencyNS / 20
	vdiff := curr.vruntime - p.vruntime + bias
	if vdiff <= 0 {
		return -1
	}
	if vdiff > calcDeltaFair(s.wakeupGranNS, p.weight) {
		return 1
	}
	return 0
}

// pickNext is pick_next_entity after put_prev: the leftmost task, unless
// the last buddy (the task a wakeup preempted) or next buddy (the wakee
// that preempted) is within a wakeup granularity of it.
func (s *Sim) pickNext(c *cpu) *Task {
	if len(c.tree) == 0 {
		return nil
	}
	left := c.tree[0]
	se := left
	if c.lastBuddy != nil && c.lastBuddy.state == TaskRunnable && c.lastBuddy.cpu == c.id &&
		s.wakeupPreemptEntity(c.lastBuddy, left) < 1 {
		se = c.lastBuddy
	}
	if c.nextBuddy != nil && c.nextBuddy.state == TaskRunnable && c.nextBuddy.cpu == c.id &&
		s.wakeupPreemptEntity(c.nextBuddy, left) < 1 {
		se = c.nextBuddy
	}
	return se
}

func (s *Sim) clearBuddies(c *cpu, t *Task) {
	if c.nextBuddy == t {
		c.nextBuddy = nil
	}
	if c.lastBuddy == t {
		c.lastBuddy = nil
	}
}

// checkPreemptWakeup is check_preempt_wakeup for a task p just enqueued on
// busy CPU c. It reports whether curr must be rescheduled.
func (s *Sim) checkPreemptWakeup(c *cpu, p *Task) bool {
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
func (s *Sim) checkPreemptTick(c *cpu) bool {
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
	return d > ideal
}

// checkPreemptNew handles a newly forked task on c (check_preempt_curr
// with WF_FORK): an idle CPU is kicked to run it, a busy one may be
// preempted.
func (s *Sim) checkPreemptNew(c *cpu, t *Task) {
	if c.curr == nil {
		s.kick(c, s.now+s.exitLatency(c))
		return
	}
	if s.checkPreemptWakeup(c, t) {
		c.needResched = true
		s.kick(c, s.now)
	}
}
