package engine

import (
	"math"

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
	if t.rt() {
		s.updateCurrRT(c, delta) // update_curr_rt: no vruntime
		return
	}
	if t.dl() {
		s.updateCurrDL(c, t, delta) // update_curr_dl
		return
	}
	s.chargeO1Slice(t, delta)
	if fs := c.fairServer; fs != nil && fs.active {
		s.dlServerUpdate(c, delta) // update_curr's dl_server_update
	}
	if t.state == TaskRunning {
		t.vruntime += calcDeltaFair(delta, t.weight)
		s.class.updateDeadline(c, t)
		s.class.updateMinVruntime(c)
	}
}

// updateMinVruntimeCFS is v5.2's update_min_vruntime (2.6 keeps the same
// bookkeeping, unread): min_vruntime stays monotonic, following the
// smaller of curr and the leftmost queued task.
func (s *Sim) updateMinVruntimeCFS(c *cpu) {
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

// treeInsert is __enqueue_entity's rb-tree insert, in vruntime order (v5.2
// and 6.6; 6.6 adds its avg_vruntime sum).
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

// treeRemove is __dequeue_entity's rb-tree erase.
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
	slice := s.schedPeriod(nr)
	if load != 0 {
		slice = slice * t.weight / load
	}
	if s.k.On(knob.BASE_SLICE) {
		// BASE_SLICE (6.1): no slice below the minimum granularity.
		slice = max(slice, s.minGranNS)
	}
	return slice
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
	s.writeLine(s.actor, c, s.now)
	c.nr++
	c.loadWeight += t.weight
	t.load.set(s.now, t.weight)
	c.runnableLoad.add(s.now, t.load.at(s.now), t.weight)
	s.attachLoad(c, t)
	c.loadAvg.add(s.now, 0, t.weight)
	if t.delayed {
		// A delayed task (era 6.12) moving between runqueues: queued
		// and loaded, but not runnable (se_runnable).
		c.nrDelayed++
	} else if s.rules.runnableAvg {
		c.runnableAvg.add(s.now, 0, 1024)
	}
	s.cpuLoadChanged(c)
	s.cfsListAdd(t)
	if c.nr >= 2 {
		s.overloaded = true
	}
	s.srqNoteEnqueue(c)
	s.updateConservation(c)
}

// accountDequeue removes t from c's counts and load sums.
func (s *Sim) accountDequeue(c *cpu, t *Task) {
	s.writeLine(s.actor, c, s.now)
	c.nr--
	c.loadWeight -= t.weight
	c.runnableLoad.add(s.now, -t.load.at(s.now), -t.weight)
	c.loadAvg.add(s.now, 0, -t.weight)
	if t.delayed {
		c.nrDelayed--
	} else if s.rules.runnableAvg {
		c.runnableAvg.add(s.now, 0, -1024)
	}
	s.cpuLoadChanged(c)
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
		if s.rules.runnableAvg {
			s.cpus[t.loadCPU].runnableAvg.add(s.now, -l*1024/t.weight, 0)
		}
		s.cpuLoadChanged(s.cpus[t.loadCPU])
	}
	c.loadAvg.add(s.now, l, 0)
	if s.rules.runnableAvg {
		c.runnableAvg.add(s.now, l*1024/t.weight, 0)
	}
	s.cpuLoadChanged(c)
	t.loadCPU = c.id
}

// detachLoad removes an exiting task's load from the CPU it is attached to.
func (s *Sim) detachLoad(t *Task) {
	if t.loadCPU >= 0 {
		if s.rules.runnableAvg {
			s.cpus[t.loadCPU].runnableAvg.add(s.now, -t.load.at(s.now)*1024/t.weight, 0)
		}
		s.cpus[t.loadCPU].loadAvg.add(s.now, -t.load.at(s.now), 0)
		s.cpuLoadChanged(s.cpus[t.loadCPU])
		t.loadCPU = -1
	}
}

// dequeueCurr takes curr off the runqueue because it blocks or exits; c.curr
// keeps pointing at it until schedule() switches away.
func (s *Sim) dequeueCurr(c *cpu, t *Task, state TaskState) {
	s.settle(c)
	s.updateCurr(c)
	if t.rt() {
		// dequeue_task_rt: off the priority array.
		s.rtDequeue(c, t)
		t.state = state
		t.util.set(s.now, 0)
		return
	}
	if t.dl() {
		// dequeue_task_dl(DEQUEUE_SLEEP): off the tree, non contending.
		s.dlDequeueSleep(c, t, state)
		t.state = state
		t.util.set(s.now, 0)
		return
	}
	if state == TaskBlocked && s.k.On(knob.DELAY_DEQUEUE) && !s.entityEligible(c, t) {
		// 6.12's dequeue_entity: a sleeper that is not eligible stays
		// queued (eevdf612.go). DELAY_DEQUEUE exists only in era 6.12.
		s.delayDequeue(c, t)
		t.state = state
		t.util.set(s.now, 0)
		return
	}
	s.class.updateEntityLag(c, t)
	s.clearBuddies(c, t)
	s.accountDequeue(c, t)
	s.class.deactivateTask(t, state)
	if state == TaskExited {
		s.detachLoad(t)
	}
	t.state = state
	t.util.set(s.now, 0)
	s.class.updateMinVruntime(c)
}

// detachQueued removes a queued (not running) task from c for migration,
// normalising its vruntime to be relative to c's min_vruntime. payer is the
// CPU doing the migration.
func (s *Sim) detachQueued(c *cpu, t *Task, payer *cpu) {
	s.srqRemove(t, payer)
	s.class.dequeueEntity(c, t)
	s.clearBuddies(c, t)
	s.accountDequeue(c, t)
	t.vruntime -= c.minVruntime
	s.updateMinVruntimeCFS(c)
}

// attachQueued enqueues a migrated task on c.
func (s *Sim) attachQueued(c *cpu, t *Task, payer *cpu) {
	s.updateCurr(c)
	t.vruntime += c.minVruntime
	t.state = TaskRunnable
	t.cpu = c.id
	s.class.enqueueEntity(c, t)
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

// LN_PREEMPT is the preemption part of Vincent Guittot's "Add latency
// priority for CFS class" v12 (Feb 2023): patch 5/8 "sched/fair: Take into
// account latency priority at wakeup" (Message-ID
// 20230224093454.956298-6-vincent.guittot@linaro.org) on top of patch 1/8
// "sched/fair: fix unfairness at wakeup" (…-2-…), which it builds on. The
// v11 posting of the same series is 20230223191041.577305-1. Patches 6–8
// (cgroup cpu.latency.nice, core scheduling, the rb-tree of latency
// sensitive entities) are not modelled.
//
// Each task gets a latency offset linear in its latency_nice,
// calc_latency_offset = sleep_latency × latency_nice / 20, where
// sleep_latency is get_sleep_latency(false): sched_latency, halved under
// GENTLE_FAIR_SLEEPERS (the patch comment says the range is
// [-sysctl_sched_latency, +sysctl_sched_latency]; the code uses the sleep
// credit, so ±half a latency by default). The offset shifts the wakeup
// preemption test asymmetrically (wakeup_latency_gran):
//   - when the wakee's or the current task's offset is negative, the two
//     offsets are compared relative to each other (wakee − curr): a -20
//     wakee preempts a 0 task it trails by up to a sleep latency, a 0 wakee
//     needs that much more lead against a -20 task, and two -20 tasks are
//     even;
//   - otherwise the wakee's own positive offset is added to the lead it
//     needs, whatever curr's: a positive latency_nice delays wakeup
//     preemption, so the task mostly waits for the tick.
// Both the offset and the granularity it widens are capped at
// get_latency_max = sleep_latency − min_granularity (patch 1/8: a sleeper
// placed a sleep latency back must still be able to preempt).

// sleepLatency is get_sleep_latency(false).
func (s *Sim) sleepLatency() int64 {
	thresh := s.latencyNS
	if s.k.On(knob.GENTLE_FAIR_SLEEPERS) {
		thresh /= 2
	}
	return thresh
}

// latencyMax is get_latency_max. The kernel computes it in unsigned
// arithmetic, so a min_granularity above the sleep latency wraps to a huge
// value that caps nothing; the engine says so directly.
func (s *Sim) latencyMax() int64 {
	m := s.sleepLatency() - s.minGranNS
	if m < 0 {
		return math.MaxInt64
	}
	return m
}

// latencyOffset is calc_latency_offset for t's latency_nice.
func (s *Sim) latencyOffset(t *Task) int64 {
	return s.sleepLatency() * int64(t.LatencyNice) / 20
}

// wakeupLatencyGran is wakeup_latency_gran(curr, se).
func (s *Sim) wakeupLatencyGran(curr, se *Task) int64 {
	off, currOff := s.latencyOffset(se), s.latencyOffset(curr)
	if off < 0 || currOff < 0 {
		off -= currOff
	}
	return min(off, s.latencyMax())
}

// wakeupPreemptLatency is wakeup_preempt_entity as the series has it when
// LN_PREEMPT is on (the v5.2 one otherwise): -1 when se trails curr by more
// than the latency offset allows, 1 when it leads by more than offset +
// wakeup granularity (capped at get_latency_max), 0 in between.
func (s *Sim) wakeupPreemptLatency(curr, se *Task) int {
	if !s.k.On(knob.LN_PREEMPT) {
		return s.wakeupPreemptEntity(curr, se)
	}
	vdiff := curr.vruntime - se.vruntime
	off := s.wakeupLatencyGran(curr, se)
	if vdiff < off {
		return -1
	}
	gran := min(off+calcDeltaFair(s.wakeupGranNS, se.weight), s.latencyMax())
	if vdiff > gran {
		return 1
	}
	return 0
}

func (s *Sim) clearBuddies(c *cpu, t *Task) {
	if c.nextBuddy == t {
		c.nextBuddy = nil
	}
	if c.lastBuddy == t {
		c.lastBuddy = nil
	}
	if c.skipBuddy == t {
		c.skipBuddy = nil
	}
}

// checkPreemptNew handles a newly forked task on c (check_preempt_curr
// with WF_FORK): an idle CPU is kicked to run it, a busy one may be
// preempted.
func (s *Sim) checkPreemptNew(c *cpu, t *Task) {
	if c.curr == nil {
		s.kick(c, s.now+s.idleWakeDelay(c, s.actor))
		return
	}
	if s.class.wakeupPreemptNew(c, t) {
		c.needResched = true
		s.kick(c, s.now)
	}
}
