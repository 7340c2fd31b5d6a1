package engine

import (
	"math"

	"schedplay/engine/cpumask"
	"schedplay/engine/machine"
)

// Fork placement (v5.2.1 kernel/sched/fair.c find_idlest_cpu,
// find_idlest_group, find_idlest_group_cpu on the SD_BALANCE_FORK path).

// findIdlestCPU is v5.2's find_idlest_cpu for fork placement: from the
// top domain of cpu down, find_idlest_group picks a group clearly less
// loaded than the local one, then its idlest CPU, and the walk continues
// below that level from the new CPU.
func (s *Sim) findIdlestCPU(t *Task, cpu int) int {
	if !t.allowed.Test(cpu) {
		cpu = s.fallbackCPU(t, cpu)
	}
	newCPU := cpu
	level := len(s.topo.Domains[cpu]) - 1
	for level >= 0 {
		dom := s.topo.Domains[cpu][level]
		g, ok := s.findIdlestGroup(dom, t, cpu)
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
		capacity := 1024 * int64(s.groupWeight(dom, gi))
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
// with the least runnable load (this CPU if none is lighter).
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
		if l := o.runnableLoad.at(s.now); best < 0 && l < leastLoad {
			least, leastLoad = id, l
		}
	}
	if best >= 0 {
		return best
	}
	return least
}
