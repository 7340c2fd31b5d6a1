package engine

import (
	"math"

	"schedplay/engine/cpumask"
	"schedplay/engine/machine"
)

// Fork placement (kernel/sched/fair.c find_idlest_cpu, find_idlest_group,
// find_idlest_group_cpu on the SD_BALANCE_FORK path): v5.2.1's for era
// 5.2, the v5.5 rework's (6.1, 6.6) for the eras on balancer66.

// findIdlestCPU is find_idlest_cpu for fork placement: from the top
// domain of cpu down, find_idlest_group (the era's: v5.2's, or the v5.5
// rework's that 6.1 and 6.6 run) picks a group to push the task to, then
// its idlest CPU, and the walk continues below that level from the new
// CPU.
func (s *Sim) findIdlestCPU(t *Task, cpu int) int {
	if !t.allowed.Test(cpu) {
		cpu = s.fallbackCPU(t, cpu)
	}
	newCPU := cpu
	// select_task_rq_fair's walk for SD_BALANCE_FORK (no affine wakeup
	// on fork): sd is the highest of the levels that have the flag from
	// the bottom up; a NUMA level beyond the reclaim distance has not
	// (sd_init, numadist.go), so the search stays in the parent's node.
	// No level: new_cpu stays the parent's CPU.
	level := -1
	for i, dom := range s.topo.Domains[cpu] {
		if !s.sdBalanceFork(dom) {
			break
		}
		level = i
	}
	for level >= 0 {
		dom := s.topo.Domains[cpu][level]
		if !s.sdBalanceFork(dom) {
			// find_idlest_cpu: a level without sd_flag is skipped
			// (sd = sd->child).
			level--
			continue
		}
		var g cpumask.Mask
		var ok bool
		if s.fair.balancer == balancer66 {
			g, ok = s.findIdlestGroup66(dom, level, t, cpu)
		} else {
			g, ok = s.findIdlestGroup(dom, t, cpu)
		}
		if !ok {
			level--
			continue
		}
		newCPU = s.findIdlestGroupCPU(g, t, cpu)
		if newCPU == cpu {
			level--
			continue
		}
		w := dom.Span.Weight()
		cpu = newCPU
		level = -1
		for i, d := range s.topo.Domains[cpu] {
			if d.Span.Weight() >= w {
				break
			}
			level = i
		}
	}
	return newCPU
}

// findIdlestGroup is v5.2's find_idlest_group on the fork path (spare
// capacity is skipped there: a new task has no utilisation yet). Groups
// are compared by runnable load per unit of capacity, with a margin of
// imbalance = 1024·(imbalance_pct−100)/100; when runnable loads are within
// that margin, the load including blocked tasks (avg_load) decides with
// imbalance_scale. Across NUMA nodes the local node is kept unless the
// remote one is lighter by more than the margin, which on a lightly
// loaded machine keeps a forking process's threads on its own node.
func (s *Sim) findIdlestGroup(dom *machine.Domain, t *Task, this int) (cpumask.Mask, bool) {
	imbalance := 1024 * (dom.ImbalancePct - 100) / 100
	imbalanceScale := 100 + (dom.ImbalancePct-100)/2
	const unset = int64(math.MaxInt64)
	var idlest cpumask.Mask
	found := false
	minRunnable, minAvg := unset, unset
	thisRunnable, thisAvg := unset, unset
	all := t.nrAllowed == s.topo.NCPU
	for gi, g := range dom.Groups {
		if !all && !g.Intersects(t.allowed) {
			continue
		}
		var runnable, avg int64
		if s.fullForkPass {
			for id := g.First(); id >= 0; id = g.Next(id + 1) {
				o := s.cpus[id]
				runnable += o.runnableLoad.at(s.now)
				avg += o.loadAvg.at(s.now)
			}
		} else {
			runnable, avg = s.groupLoadSums(dom, gi)
		}
		capacity := s.groupCapacity(dom.Level, g.First(), s.groupWeight(dom, gi)) // group->sgc->capacity
		runnable = runnable * 1024 / capacity
		avg = avg * 1024 / capacity
		if g.Test(this) {
			thisRunnable, thisAvg = runnable, avg
			continue
		}
		switch {
		case minRunnable == unset || minRunnable > runnable+imbalance:
			minRunnable, minAvg = runnable, avg
			idlest, found = g, true
		case runnable < minRunnable+imbalance && 100*minAvg > imbalanceScale*avg:
			minAvg = avg
			idlest, found = g, true
		}
	}
	if !found {
		return idlest, false
	}
	if thisRunnable == unset {
		// this CPU's group is not allowed: any allowed group will do.
		return idlest, true
	}
	if dom.Level == machine.LevelNUMA && minRunnable+imbalance >= thisRunnable {
		return idlest, false
	}
	if minRunnable > thisRunnable+imbalance {
		return idlest, false
	}
	if thisRunnable < minRunnable+imbalance && 100*thisAvg < imbalanceScale*minAvg {
		return idlest, false
	}
	return idlest, true
}

// findIdlestGroupCPU is find_idlest_group_cpu: an idle CPU in the
// shallowest C-state (most recently idle on ties), else the allowed CPU
// with the least load (cpu_load: runnable_load_avg at v5.2, load_avg from
// v5.7; this CPU if none is lighter).
func (s *Sim) findIdlestGroupCPU(g cpumask.Mask, t *Task, this int) int {
	if g.Weight() == 1 {
		return g.First()
	}
	best, bestExit, bestSince := -1, int64(-1), int64(-1)
	least, leastLoad := this, int64(math.MaxInt64)
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		if !t.allowed.Test(id) {
			continue
		}
		o := s.cpus[id]
		if o.idle() {
			e := s.declaredExitUS(o)
			if best < 0 || e < bestExit || (e == bestExit && o.idleSince > bestSince) {
				best, bestExit, bestSince = id, e, o.idleSince
			}
			continue
		}
		if l := s.cpuLoad(o); best < 0 && l < leastLoad {
			least, leastLoad = id, l
		}
	}
	if best >= 0 {
		return best
	}
	return least
}

// findIdlestGroup66 is find_idlest_group as the v5.5 rework left it ("sched/fair:
// Rework find_idlest_group", with v5.18's adjust_numa_imbalance): read in
// 6.1 (Debian's linux-source-6.1, fair.c find_idlest_group,
// update_sg_wakeup_stats, update_pick_idlest), the same in v6.6. Groups are
// classified as the load balancer classifies them; the idlest is the least
// busy type, then by type: the lowest avg_load (overloaded, fully busy)
// or the most idle CPUs and then the lowest utilisation (spare capacity).
// The local group is kept unless it is busier by type, or by the type's
// own test; at a NUMA level with spare capacity on both sides it is kept
// while the idle CPUs differ by at most NUMA_IMBALANCE_MIN (2) and the
// local node would run at most imb_numa_nr tasks with this one. A new
// task has no NUMA preference here (numa_preferred_nid is only learnt by
// scanning), so the kernel's preferred-node shortcut never applies.
func (s *Sim) findIdlestGroup66(dom *machine.Domain, di int, t *Task, this int) (cpumask.Mask, bool) {
	var idlest, local cpumask.Mask
	var idlestSGS, localSGS, sgs sgStats66
	haveIdlest, haveLocal := false, false
	idlestSGS.gtype, idlestSGS.avgLoad = groupOverloaded66, math.MaxInt64
	all := t.nrAllowed == s.topo.NCPU
	for _, g := range dom.Groups {
		if !all && !g.Intersects(t.allowed) {
			continue
		}
		s.updateSGWakeupStats(dom, g, &sgs)
		if g.Test(this) {
			local, localSGS, haveLocal = g, sgs, true
			continue
		}
		if pickIdlest66(&idlestSGS, &sgs) {
			idlest, idlestSGS, haveIdlest = g, sgs, true
		}
	}
	if !haveIdlest {
		return idlest, false
	}
	if !haveLocal {
		return idlest, true // the local group is not allowed
	}
	if localSGS.gtype != idlestSGS.gtype {
		return idlest, localSGS.gtype > idlestSGS.gtype
	}
	switch localSGS.gtype {
	case groupOverloaded66, groupFullyBusy:
		imbalance := 1024 * (imbPct66(dom) - 100) / 100
		if dom.Level == machine.LevelNUMA && idlestSGS.avgLoad+imbalance >= localSGS.avgLoad {
			return idlest, false
		}
		if idlestSGS.avgLoad >= localSGS.avgLoad+imbalance {
			return idlest, false
		}
		if 100*localSGS.avgLoad <= imbPct66(dom)*idlestSGS.avgLoad {
			return idlest, false
		}
	case groupImbalanced66:
		return idlest, false // not used on the fork path
	case groupHasSpare:
		if dom.Level == machine.LevelNUMA {
			// p->nr_cpus_allowed is never NR_CPUS (the kernel's
			// compile-time maximum): the allowed CPUs of the local
			// group bound imb_numa_nr.
			allowedLocal := local.Weight()
			if !all {
				allowedLocal = 0
				for id := local.First(); id >= 0; id = local.Next(id + 1) {
					if t.allowed.Test(id) {
						allowedLocal++
					}
				}
			}
			imbNumaNr := min(allowedLocal, s.imbNumaNr(s.cpus[this], di))
			imb := int64(localSGS.idleCPUs - idlestSGS.idleCPUs)
			if imb < 0 {
				imb = -imb
			}
			if adjustNumaImbalance(imb, localSGS.sumNrRunning+1, imbNumaNr) == 0 {
				return idlest, false
			}
		}
		if localSGS.idleCPUs >= idlestSGS.idleCPUs {
			return idlest, false
		}
	}
	return idlest, true
}

// updateSGWakeupStats is update_sg_wakeup_stats for a new task (it has no
// load anywhere yet, so the "without p" sums are the plain ones).
func (s *Sim) updateSGWakeupStats(dom *machine.Domain, g cpumask.Mask, sgs *sgStats66) {
	*sgs = sgStats66{group: g}
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		o := s.cpus[id]
		sgs.groupLoad += o.loadAvg.at(s.now)
		sgs.groupUtil += s.cpuUtil66(o)
		sgs.groupRunnable += o.runnableAvg.at(s.now)
		sgs.sumHNrRunning += o.nr
		sgs.sumNrRunning += o.nrRunning()
		if o.nr == 0 && o.idle() {
			sgs.idleCPUs++
		}
	}
	sgs.groupWeight = g.Weight()
	sgs.groupCapacity = s.groupCapacity(dom.Level, g.First(), sgs.groupWeight) // group->sgc->capacity
	sgs.gtype = s.groupClassify66(dom, sgs, false)
	if sgs.gtype == groupFullyBusy || sgs.gtype == groupOverloaded66 {
		sgs.avgLoad = sgs.groupLoad * 1024 / sgs.groupCapacity
	}
}

// pickIdlest66 is update_pick_idlest: whether sgs is idler than idlest.
func pickIdlest66(idlest, sgs *sgStats66) bool {
	if sgs.gtype != idlest.gtype {
		return sgs.gtype < idlest.gtype
	}
	switch sgs.gtype {
	case groupOverloaded66, groupFullyBusy:
		return sgs.avgLoad < idlest.avgLoad
	case groupImbalanced66:
		return false
	case groupHasSpare:
		if idlest.idleCPUs != sgs.idleCPUs {
			return sgs.idleCPUs > idlest.idleCPUs
		}
		return sgs.groupUtil < idlest.groupUtil
	}
	return true
}
