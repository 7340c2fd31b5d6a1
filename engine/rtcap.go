package engine

import (
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// What the RT and deadline classes cost the fair class: the capacity its
// balancer sees.
//
// The kernel keeps two more PELT signals per runqueue beside the fair
// class's: rq->avg_rt, a running signal that accrues while an RT task runs
// on the CPU, and rq->avg_dl, the same for a deadline task
// (update_rt_rq_load_avg and update_dl_rq_load_avg, kernel/sched/pelt.c of
// v5.2.1, 6.1.192 and 6.12.118: ___update_load_sum with load, runnable and
// running all equal to "running", so util_avg tends to 1024 while the
// class runs and decays otherwise). They are brought up to date by
// put_prev_task_rt, task_tick_rt, set_next_task_rt (v5.2:
// pick_next_task_rt) and their deadline counterparts, and by
// update_blocked_averages before balancing; a continuous signal with
// input 1024 while curr is of the class (avgRT, avgDL below) is the same
// average read at any instant. In 6.12 a fair task run by the fair server
// is curr of the fair class: its time is fair time, not deadline time
// (update_dl_rq_load_avg is only called from deadline.c's
// put_prev_task_dl, task_tick_dl, set_next_task_dl and
// switched_from_dl, on a deadline task; update_other_load_avgs tests
// curr's class).
//
// scale_rt_capacity (fair.c, all three versions) subtracts their sum from
// the CPU's original capacity (SCHED_CAPACITY_SCALE here: symmetric
// machines, no frequency scaling, no IRQ time accounting), and
// update_cpu_capacity stores the result, at least 1, in rq->cpu_capacity
// (capacity_of) and in the CPU's own lowest-level group's
// sched_group_capacity. update_group_capacity, run by update_sd_lb_stats
// for the local group (always on a periodic or idle pass, and on a newly
// idle one only once sgc->next_update has passed), sums a group's child
// groups' capacities; every other group's capacity is whatever a CPU of
// that group last stored there (the sgc is shared). At boot every group
// has weight × 1024 (init_sched_groups_capacity).
//
// In a run without RT or deadline tasks none of this is built: every
// capacity is exactly 1024 per CPU, as before.

// capOn reports whether CPU capacities can be below 1024: the RT or the
// deadline class exists.
func (s *Sim) capOn() bool { return (s.rt != nil || s.dl != nil) && !s.capFull }

// capState is the sched_group_capacity cache, built at the first read
// once the RT or deadline class exists.
type capState struct {
	// sgCap and sgNext are sgc->capacity and sgc->next_update (in
	// jiffies) of each group, indexed by level × NCPU + the group's first
	// CPU, like lbState.sgImb.
	sgCap  []int64
	sgNext []int64
}

func (s *Sim) capInit() {
	n := (int(machine.LevelNUMA) + 1) * s.topo.NCPU
	s.cap.sgCap = make([]int64, n)
	s.cap.sgNext = make([]int64, n)
	for id := range s.cpus {
		for _, d := range s.topo.Domains[id] {
			for _, g := range d.Groups {
				s.cap.sgCap[int(d.Level)*s.topo.NCPU+g.First()] = 1024 * int64(g.Weight())
			}
		}
	}
}

// sgcIndex is the cache index of the group of level whose first CPU is
// first.
func (s *Sim) sgcIndex(level machine.Level, first int) int {
	return int(level)*s.topo.NCPU + first
}

// groupCapacity is sgc->capacity of the group g (of weight w) at level:
// w × 1024 in a run without RT or deadline tasks.
func (s *Sim) groupCapacity(level machine.Level, first, w int) int64 {
	if !s.capOn() {
		return 1024 * int64(w)
	}
	if s.cap.sgCap == nil {
		s.capInit()
	}
	return s.cap.sgCap[s.sgcIndex(level, first)]
}

// setClassSignals sets the inputs of c's fair utilisation and RT and
// deadline running signals for curr t (nil: idle), in a run with the RT
// or deadline class. The fair class's util_avg only accrues while a fair
// task runs (v5.2 cpu_util, 6.x cpu_util_cfs read cfs_rq->avg.util_avg).
func (s *Sim) setClassSignals(c *cpu, t *Task) {
	var fair, rt, dl int64
	switch {
	case t == nil:
	case t.rt():
		rt = 1024
	case t.dl():
		dl = 1024
	default:
		fair = 1024
	}
	c.util.set(s.now, fair)
	c.avgRT.set(s.now, rt)
	c.avgDL.set(s.now, dl)
}

// scaleRTCapacity is scale_rt_capacity (v5.2.1, 6.1 and 6.12
// kernel/sched/fair.c): the original capacity less avg_rt and avg_dl
// util_avg, 1 when they use it all (no IRQ time: scale_irq_capacity with
// irq 0 is the identity).
func scaleRTCapacity(avgRT, avgDL int64) int64 {
	used := avgRT + avgDL
	if used >= 1024 {
		return 1
	}
	return 1024 - used
}

// updateCPUCapacity is update_cpu_capacity: c's rq->cpu_capacity and its
// lowest-level group's sgc->capacity (a single-CPU group), at least 1.
// idx is the cache index of that group.
func (s *Sim) updateCPUCapacity(c *cpu, idx int) {
	capacity := max(scaleRTCapacity(c.avgRT.at(s.now), c.avgDL.at(s.now)), 1)
	c.capacity = capacity
	s.cap.sgCap[idx] = capacity
}

// updateGroupCapacity is update_group_capacity(env->sd, env->dst_cpu) as
// update_sd_lb_stats calls it for the local group (v5.2.1 fair.c
// update_sd_lb_stats; 6.1 and 6.12 the same): not on a newly idle pass
// before sgc->next_update. It sets next_update to balance_interval
// (jiffies, clamped to [1, max_load_balance_interval]) from now; at the
// lowest level it is update_cpu_capacity, above it the sum of the child
// groups' capacities (an SD_OVERLAP child — a NUMA level under a NUMA
// level — sums the CPUs' capacities instead).
func (s *Sim) updateGroupCapacity(env *lbEnv) {
	if !s.capOn() {
		return
	}
	if s.cap.sgCap == nil {
		s.capInit()
	}
	sd := env.sd
	g := sd.Groups[env.localIdx] // sd->groups
	idx := s.sgcIndex(sd.Level, g.First())
	jiffies := s.now / s.tickNS
	if env.idle == cpuNewlyIdle && jiffies < s.cap.sgNext[idx] {
		return
	}
	s.cap.sgNext[idx] = jiffies + s.intervalJiffiesNS(env.ds.balanceIntervalMS)/s.tickNS
	child := env.child
	if child == nil {
		s.updateCPUCapacity(env.dst, idx)
		return
	}
	capacity := int64(0)
	if child.Level == machine.LevelNUMA {
		for id := g.First(); id >= 0; id = g.Next(id + 1) {
			capacity += s.cpus[id].capacity
		}
	} else {
		for _, cg := range child.Groups {
			capacity += s.cap.sgCap[s.sgcIndex(child.Level, cg.First())]
		}
	}
	s.cap.sgCap[idx] = capacity
}

// checkCPUCapacity is check_cpu_capacity: c's capacity is noticeably
// reduced by other classes (by more than sd's imbalance_pct margin).
func checkCPUCapacity(c *cpu, pct int64) bool {
	return c.capacity*pct < 1024*100
}

// reducedCapacityPull is the reduced-capacity case of need_active_balance
// (v5.2.1 voluntary_active_balance; 6.1 and 6.12 need_active_balance): an
// idle destination, a source with a single fair task whose capacity is
// reduced, and more capacity left on the destination (by the margin).
func reducedCapacityPull(env *lbEnv, pct int64) bool {
	return env.idle != cpuNotIdle && env.src.nr == 1 && checkCPUCapacity(env.src, pct) &&
		env.src.capacity*pct < env.dst.capacity*100
}

// CPUCapacity returns capacity_of(cpu) as the fair balancer last computed
// it (rq->cpu_capacity: 1024 less the RT and deadline utilisation).
func (s *Sim) CPUCapacity(cpu int) int64 { return s.cpus[cpu].capacity }

// RTUtil and DLUtil return the CPU's avg_rt and avg_dl util_avg now.
func (s *Sim) RTUtil(cpu int) int64 { return s.cpus[cpu].avgRT.at(s.now) }

// DLUtil returns the CPU's avg_dl util_avg now.
func (s *Sim) DLUtil(cpu int) int64 { return s.cpus[cpu].avgDL.at(s.now) }

// activeStopFair is active_load_balance_cpu_stop (v5.2.1, 6.1, 6.12
// fair.c) when the source CPU's curr is an RT or deadline task, which
// the stopper preempts: detach_one_task moves the first fair task of
// src's cfs_tasks, from the tail, that may run on the balancing CPU
// (allowed there and not a per-CPU kthread; the stopper's pass ignores
// cache hotness: v5.2's failure count is past cache_nice_tries, 6.x sets
// LBF_ACTIVE_LB), at once. It reports whether curr was such a task;
// otherwise the fair curr is pushed at src's next switch (pushTo), as
// before. Era 6.x's stopper clears the level's nr_balance_failed when it
// moved a task.
func (s *Sim) activeStopFair(env *lbEnv) bool {
	src, dst := env.src, env.this
	if src.curr == nil || !(src.curr.rt() || src.curr.dl()) {
		return false
	}
	cands := s.sortedCands(src)
	for _, p := range cands {
		if p.state == TaskRunning || p.delayed || !p.allowed.Test(dst.id) ||
			(s.fair.perCPUKthreadStays && p.Kthread() && p.nrAllowed == 1) {
			continue
		}
		s.class.detachTask(src, p, dst)
		s.class.attachTask(dst, p, dst)
		s.wakeForPulledAt(dst, p, env.payer, env.at+s.k.Get(knob.IPINS))
		s.stats.lbMoved++
		if s.fair.balancer == balancer66 {
			s.activePushed(src, dst)
		}
		break
	}
	clear(cands)
	s.lb.cands = cands[:0]
	return true
}

// reducedCapacityKick is nohz_balancer_kick's reduced-capacity case
// (v5.2.1, 6.1, 6.12 fair.c): a CPU with a fair task whose capacity RT or
// deadline time reduced (check_cpu_capacity against its lowest domain,
// rq->sd) kicks the idle load balancer.
func (s *Sim) reducedCapacityKick(c *cpu) bool {
	if !s.capOn() || c.nr == 0 {
		return false
	}
	doms := c.domains()
	return len(doms) > 0 && checkCPUCapacity(c, s.fair.imbalancePct(doms[0]))
}
