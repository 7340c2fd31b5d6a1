package engine

import (
	"math"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// find_busiest_group and find_busiest_queue as v5.2 has them (v5.2.1
// kernel/sched/fair.c, before Vincent Guittot's v5.5 rework): groups are
// group_other, group_imbalanced or group_overloaded (group_misfit_task
// needs asymmetric CPU capacities, which the model has not); loads are
// PELT runnable loads (weighted_cpuload = cfs_rq->runnable_load_avg) per
// SCHED_CAPACITY_SCALE of capacity; the imbalance is an amount of load,
// bumped to one task's worth by fix_small_imbalance.

// groupType is enum group_type, ordered from least to most busy.
type groupType uint8

const (
	groupOther groupType = iota
	groupMisfitTask
	groupImbalanced
	groupOverloaded
)

// fbqType is enum fbq_type: which runqueues find_busiest_queue may pick
// at a NUMA level (regular: some task has no NUMA preference; remote: some
// task runs off its preferred node; all: no distinction).
type fbqType uint8

const (
	fbqRegular fbqType = iota
	fbqRemote
	fbqAll
)

// lbEnv is struct lb_env.
type lbEnv struct {
	sd       *machine.Domain
	ds       *domState       // this CPU's state of sd (nr_balance_failed, ...)
	child    *machine.Domain // sd->child, nil at the lowest level
	localIdx int             // index of the local group in sd.Groups
	llc      bool            // sd is this CPU's sd_llc
	root     bool            // sd has no parent

	this   *cpu // this_cpu: the CPU whose domain is balanced
	dst    *cpu // dst_cpu (may become new_dst_cpu)
	src    *cpu
	dstGrp cpumask.Mask // dst_grpmask: the local group's span
	newDst int

	idle      idleType
	imbalance int64
	cpus      cpumask.Mask // CPUs still under consideration
	cpusFull  bool         // cpus is still sd's whole span
	flags     lbFlags

	loop, loopBreak, loopMax int

	fbq        fbqType
	srcGrpType groupType

	payer *cpu  // the CPU doing the work
	at    int64 // when it does this pass

	// era 6.6 (balance66.go)
	migration migrationType // env->migration_type
	di        int           // the level of sd in this CPU's domains
}

// sgStats is struct sg_lb_stats.
type sgStats struct {
	group         cpumask.Mask
	avgLoad       int64 // group_load per SCHED_CAPACITY_SCALE of capacity
	groupLoad     int64
	loadPerTask   int64
	sumWeighted   int64
	groupCapacity int64
	groupUtil     int64
	sumNrRunning  int
	idleCPUs      int
	groupWeight   int
	noCapacity    bool
	gtype         groupType
}

// sdStats is struct sd_lb_stats (only the local and busiest groups'
// statistics are kept, as in the kernel).
type sdStats struct {
	haveBusiest   bool
	busiest       sgStats
	local         sgStats
	totalRunning  int
	totalLoad     int64
	totalCapacity int64
	totalUtil     int64 // for SIS_UTIL's nr_idle_scan
	avgLoad       int64
}

// groupHasCapacity is group_has_capacity: fewer tasks than CPUs, or
// utilisation below capacity by the imbalance_pct margin.
func groupHasCapacity(sd *machine.Domain, sgs *sgStats) bool {
	if sgs.sumNrRunning < sgs.groupWeight {
		return true
	}
	return sgs.groupCapacity*100 > sgs.groupUtil*sd.ImbalancePct
}

// groupIsOverloaded is group_is_overloaded: more tasks than CPUs and
// utilisation above capacity by the imbalance_pct margin. A group with
// exactly one task per CPU is neither overloaded nor with capacity.
func groupIsOverloaded(sd *machine.Domain, sgs *sgStats) bool {
	if sgs.sumNrRunning <= sgs.groupWeight {
		return false
	}
	return sgs.groupCapacity*100 < sgs.groupUtil*sd.ImbalancePct
}

// groupClassify is group_classify.
func (s *Sim) groupClassify(sd *machine.Domain, sgs *sgStats) groupType {
	if sgs.noCapacity {
		return groupOverloaded
	}
	if *s.sgImbalance(sd.Level, sgs.group.First()) {
		return groupImbalanced
	}
	return groupOther
}

// updateSGStats is update_sg_lb_stats for group g. It reports whether a
// CPU of the group has more than one task (SG_OVERLOAD).
func (s *Sim) updateSGStats(env *lbEnv, gi int, sgs *sgStats) (overload bool) {
	g := env.sd.Groups[gi]
	ids := env.sd.GroupCPUs[gi]
	*sgs = sgStats{group: g}
	for _, id := range ids {
		if !env.cpusFull && !env.cpus.Test(int(id)) {
			continue
		}
		o := s.cpus[id]
		// LB_BIAS is off in v5.2: source_load/target_load of any load
		// index are weighted_cpuload, the PELT runnable load.
		load := o.runnableLoad.at(s.now)
		sgs.groupLoad += load
		sgs.groupUtil += min(o.util.at(s.now), 1024) // cpu_util: capped at capacity_orig
		sgs.sumNrRunning += o.nr
		if o.nrRunning() > 1 {
			overload = true
		}
		sgs.sumWeighted += load
		if o.nr == 0 && o.idle() {
			sgs.idleCPUs++
		}
	}
	// group->sgc->capacity (rtcap.go): weight × SCHED_CAPACITY_SCALE
	// less what RT and deadline time took, as last stored; it counts the
	// whole group.
	sgs.groupWeight = len(ids)
	sgs.groupCapacity = s.groupCapacity(env.sd.Level, int(ids[0]), sgs.groupWeight)
	// group_load·1024 / group_capacity (with capacity = weight·1024,
	// exactly group_load / weight).
	sgs.avgLoad = sgs.groupLoad * 1024 / sgs.groupCapacity
	if sgs.sumNrRunning > 0 {
		sgs.loadPerTask = sgs.sumWeighted / int64(sgs.sumNrRunning)
	}
	sgs.noCapacity = groupIsOverloaded(env.sd, sgs)
	// groupClassify, with the group's first CPU at hand.
	switch {
	case sgs.noCapacity:
		sgs.gtype = groupOverloaded
	case s.lb.sgImb[int(env.sd.Level)*s.topo.NCPU+int(ids[0])]:
		sgs.gtype = groupImbalanced
	default:
		sgs.gtype = groupOther
	}
	return overload
}

// pickBusiest is update_sd_pick_busiest without the misfit and asymmetric
// packing cases: a busier group type wins, then a strictly higher
// avg_load (so the first of equals, in the domain's group order, stays).
func pickBusiest(sds *sdStats, sgs *sgStats) bool {
	b := &sds.busiest // zero before the first pick: group_other, avg_load 0
	if sgs.gtype != b.gtype {
		return sgs.gtype > b.gtype
	}
	return sgs.avgLoad > b.avgLoad
}

// updateSDStats is update_sd_lb_stats. The groups are visited from the
// local one on, wrapping (the order build_sched_groups links them in).
func (s *Sim) updateSDStats(env *lbEnv, sds *sdStats) {
	groups := env.sd.Groups
	// The child level prefers siblings (SD_PREFER_SIBLING: every level
	// but NUMA in v5.2).
	preferSibling := env.child != nil && env.child.PreferSibling
	overload := false
	var tmp sgStats
	gi := env.localIdx
	for k := range groups {
		g := gi
		if gi++; gi == len(groups) {
			gi = 0
		}
		sgs := &tmp
		if k == 0 {
			sgs = &sds.local
			s.updateGroupCapacity(env)
		}
		if s.updateSGStats(env, g, sgs) {
			overload = true
		}
		if k > 0 {
			// Lower the capacity of a group with at least two tasks
			// more than the local group, when the local group has
			// room, so the excess moves to siblings.
			if preferSibling && groupHasCapacity(env.sd, &sds.local) &&
				sgs.sumNrRunning > sds.local.sumNrRunning+1 {
				sgs.noCapacity = true
				sgs.gtype = s.groupClassify(env.sd, sgs)
			}
			if pickBusiest(sds, sgs) {
				sds.busiest = *sgs
				sds.haveBusiest = true
			}
		}
		sds.totalRunning += sgs.sumNrRunning
		sds.totalLoad += sgs.groupLoad
		sds.totalCapacity += sgs.groupCapacity
		sds.totalUtil += sgs.groupUtil
	}
	if env.sd.Level == machine.LevelNUMA && sds.haveBusiest {
		env.fbq = s.fbqClassifyGroup(env, &sds.busiest)
	}
	if env.root {
		// root_domain->overload: some CPU has a task waiting.
		s.overloaded = overload
	}
	if env.idle != cpuNewlyIdle && env.llc {
		// SIS_UTIL (a later kernel's update_idle_cpu_scan, run from the
		// LLC level's periodic balance): refresh the scan depth.
		s.llcs[s.topo.LLC[env.this.id]].nrIdleScan = nrIdleScan(sds.totalUtil, int64(env.sd.Span.Weight()), env.sd.ImbalancePct)
	}
}

// findBusiestGroup is find_busiest_group: it reports whether the domain is
// unbalanced, leaving the busiest group in sds and the load to move in
// env.imbalance. (check_asym_packing and the energy-aware bail-out do not
// apply: no SD_ASYM_PACKING, no energy model.)
func (s *Sim) findBusiestGroup(env *lbEnv, sds *sdStats) bool {
	s.updateSDStats(env, sds)
	local, busiest := &sds.local, &sds.busiest
	env.imbalance = 0
	if !sds.haveBusiest || busiest.sumNrRunning == 0 {
		return false
	}
	sds.avgLoad = 1024 * sds.totalLoad / sds.totalCapacity
	switch {
	case busiest.gtype == groupImbalanced:
		// Affinity defeated the level below: the usual checks assume
		// all things are equal, so skip them.
	case env.idle != cpuNotIdle && groupHasCapacity(env.sd, local) && busiest.noCapacity:
		// An idle CPU with room pulls from a group without capacity
		// whatever the avg_load says (SMP nice).
	default:
		if local.avgLoad >= busiest.avgLoad {
			return false
		}
		if local.avgLoad >= sds.avgLoad {
			return false
		}
		if env.idle == cpuIdle {
			// Idle CPU: balanced unless busiest is overloaded or has
			// at least two fewer idle CPUs than the local group.
			if busiest.gtype != groupOverloaded && local.idleCPUs <= busiest.idleCPUs+1 {
				return false
			}
		} else if 100*busiest.avgLoad <= env.sd.ImbalancePct*local.avgLoad {
			// Busy or newly idle: conservative imbalance_pct test.
			return false
		}
	}
	env.srcGrpType = busiest.gtype
	calculateImbalance(env, sds, s.cpuAvgLoadPerTask(env.dst))
	return env.imbalance != 0
}

// cpuAvgLoadPerTask is cpu_avg_load_per_task.
func (s *Sim) cpuAvgLoadPerTask(c *cpu) int64 {
	if c.nr == 0 {
		return 0
	}
	return c.runnableLoad.at(s.now) / int64(c.nr)
}

// calculateImbalance is calculate_imbalance: move enough load to bring
// busiest down to the domain average without pushing the local group above
// it, and, when both groups are overloaded, without taking busiest below
// its capacity (load_above_capacity); when that is less than one task's
// load, fix_small_imbalance decides. dstLPT is the destination CPU's
// load per task.
func calculateImbalance(env *lbEnv, sds *sdStats, dstLPT int64) {
	local, busiest := &sds.local, &sds.busiest
	if busiest.gtype == groupImbalanced {
		// Group-wide averages are meaningless when affinity skews
		// them: look at the wider average.
		busiest.loadPerTask = min(busiest.loadPerTask, sds.avgLoad)
	}
	if busiest.avgLoad <= sds.avgLoad || local.avgLoad >= sds.avgLoad {
		env.imbalance = 0
		fixSmallImbalance(env, sds, dstLPT)
		return
	}
	loadAboveCapacity := int64(math.MaxInt64)
	if busiest.gtype == groupOverloaded && local.gtype == groupOverloaded {
		// No idle CPUs: do not create some.
		lac := int64(busiest.sumNrRunning) * 1024
		if lac > busiest.groupCapacity {
			lac -= busiest.groupCapacity
			lac *= 1024 // scale_load_down(NICE_0_LOAD)
			lac /= busiest.groupCapacity
			loadAboveCapacity = lac
		}
	}
	maxPull := min(busiest.avgLoad-sds.avgLoad, loadAboveCapacity)
	env.imbalance = min(maxPull*busiest.groupCapacity, (sds.avgLoad-local.avgLoad)*local.groupCapacity) / 1024
	if env.imbalance < busiest.loadPerTask {
		fixSmallImbalance(env, sds, dstLPT)
	}
}

// fixSmallImbalance is fix_small_imbalance: the imbalance becomes one of
// busiest's tasks (load_per_task) when moving one still leaves busiest at
// least as loaded as the local group (imbn = 2, or 1 when busiest's tasks
// are the heavier), or when moving it would use more CPU capacity in total.
func fixSmallImbalance(env *lbEnv, sds *sdStats, dstLPT int64) {
	local, busiest := &sds.local, &sds.busiest
	imbn := int64(2)
	if local.sumNrRunning == 0 {
		local.loadPerTask = dstLPT
	} else if busiest.loadPerTask > local.loadPerTask {
		imbn = 1
	}
	scaledBusyLPT := busiest.loadPerTask * 1024 / busiest.groupCapacity
	if busiest.avgLoad+scaledBusyLPT >= local.avgLoad+scaledBusyLPT*imbn {
		env.imbalance = busiest.loadPerTask
		return
	}
	// Not enough imbalance to justify moving a task; it may still raise
	// the total CPU capacity used.
	capaNow := busiest.groupCapacity*min(busiest.loadPerTask, busiest.avgLoad) +
		local.groupCapacity*min(local.loadPerTask, local.avgLoad)
	capaNow /= 1024
	capaMove := int64(0)
	if busiest.avgLoad > scaledBusyLPT {
		capaMove += busiest.groupCapacity * min(busiest.loadPerTask, busiest.avgLoad-scaledBusyLPT)
	}
	var tmp int64
	if busiest.avgLoad*busiest.groupCapacity < busiest.loadPerTask*1024 {
		tmp = busiest.avgLoad * busiest.groupCapacity / local.groupCapacity
	} else {
		tmp = busiest.loadPerTask * 1024 / local.groupCapacity
	}
	capaMove += local.groupCapacity * min(local.loadPerTask, local.avgLoad+tmp)
	capaMove /= 1024
	if capaMove > capaNow {
		env.imbalance = busiest.loadPerTask
	}
}

// findBusiestQueue is find_busiest_queue: the CPU of the busiest group
// with the highest runnable load per capacity (capacity_of: wl_i·cap_j >
// wl_j·cap_i; the first on ties), skipping a CPU whose single task
// (rq->nr_running == 1) weighs more than the imbalance — moving it would
// only move the imbalance — unless RT or deadline time reduced its
// capacity (check_cpu_capacity) and, at a NUMA level, CPUs whose tasks
// are better placed than the group's (fbq_type).
func (s *Sim) findBusiestQueue(env *lbEnv, b *sgStats) *cpu {
	var best *cpu
	bestLoad, bestCap := int64(0), int64(1)
	g := b.group
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		if !env.cpus.Test(id) {
			continue
		}
		o := s.cpus[id]
		if o.nr == 0 {
			// Nothing to take (the kernel would only ever pick an
			// empty CPU for a rounding residue of its PELT sum).
			continue
		}
		if s.fbqClassifyRQ(env, o) > env.fbq {
			continue
		}
		wl := o.runnableLoad.at(s.now)
		if o.nrRunning() == 1 && wl > env.imbalance && !checkCPUCapacity(o, env.sd.ImbalancePct) {
			continue
		}
		if wl*bestCap > bestLoad*o.capacity {
			best, bestLoad, bestCap = o, wl, o.capacity
		}
	}
	return best
}

// numaTask reports whether t counts in nr_numa_running: it has a
// preferred node (numa_preferred_nid, here the node of its memory), which
// the kernel only sets from NUMA hinting faults, so not before the first
// scan of its memory, numa_balancing_scan_delay_ms after it started (a
// short benchmark's tasks never have one).
func (s *Sim) numaTask(t *Task) bool {
	return t.memNode >= 0 && s.k.On(knob.NUMA_BALANCING) &&
		s.now-t.forkedAt >= s.k.Get(knob.NUMAScanDelayMS)*Millisecond
}

// numaRunning returns c's nr_numa_running and nr_preferred_running.
func (s *Sim) numaRunning(c *cpu) (numa, preferred int) {
	node := s.topo.Socket[c.id]
	count := func(t *Task) {
		if s.numaTask(t) {
			numa++
			if t.memNode == node {
				preferred++
			}
		}
	}
	for _, t := range c.tree {
		count(t)
	}
	if c.curr != nil && c.curr.state == TaskRunning {
		count(c.curr)
	}
	return numa, preferred
}

func fbqClassify(nr, numa, preferred int) fbqType {
	switch {
	case nr > numa:
		return fbqRegular
	case nr > preferred:
		return fbqRemote
	}
	return fbqAll
}

// fbqClassifyGroup is fbq_classify_group for the busiest group.
func (s *Sim) fbqClassifyGroup(env *lbEnv, b *sgStats) fbqType {
	if !s.k.On(knob.NUMA_BALANCING) {
		return fbqAll
	}
	numa, preferred := 0, 0
	for id := b.group.First(); id >= 0; id = b.group.Next(id + 1) {
		if env.cpus.Test(id) {
			n, p := s.numaRunning(s.cpus[id])
			numa += n
			preferred += p
		}
	}
	return fbqClassify(b.sumNrRunning, numa, preferred)
}

// fbqClassifyRQ is fbq_classify_rq (only consulted at a NUMA level).
func (s *Sim) fbqClassifyRQ(env *lbEnv, c *cpu) fbqType {
	if env.fbq == fbqAll {
		return fbqRegular
	}
	numa, preferred := s.numaRunning(c)
	return fbqClassify(c.nr, numa, preferred)
}
