package engine

import (
	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// The load balancer of era 6.6: Vincent Guittot's rework of v5.5
// ("sched/fair: Rework load_balance") as it stands in v6.6, read against
// kernel/sched/fair.c and kernel/sched/topology.c at the 6.6.57 stable tag
// (mirror lxdklp/linux-6.6.y, commit 5aa5a1b8c29ffbb5ffc002f8fb1b8ad7b703f47e).
// rebalanceDomains and newidleBalance dispatch here at their top; the tick,
// the NOHZ kick and the ILB walk (balance.go, balance_idle.go) are shared.
//
// What differs from v5.2, as modelled:
//   - groups are classified group_has_spare < group_fully_busy <
//     group_smt_balance < group_imbalanced < group_overloaded, with PELT
//     runnable_avg (the runnable-task count, ×1024) beside util_avg in the
//     capacity tests; loads are cpu_load() = cfs_rq->avg.load_avg, blocked
//     load included;
//   - find_busiest_group follows the decision matrix of the rework, and
//     calculate_imbalance sets a migration type: migrate_load (an amount of
//     load, only when both groups are or will be overloaded), migrate_util
//     (spare capacity of the local group, above the LLC), migrate_task (a
//     number of tasks: even out idle CPUs, or tasks per core under
//     SD_PREFER_SIBLING with sibling_imbalance);
//   - find_busiest_queue picks by migration type (most load, most
//     utilisation with more than one task, most tasks) and detach_tasks
//     counts what it moves in the same unit; a task heavier than the
//     imbalance may still move once the level has failed (shr_bound);
//   - active balance only for migrate_task imbalances (imbalanced_active_
//     balance) and the stopper, not load_balance, resets nr_balance_failed;
//   - task_hot exempts SMT siblings and only the next buddy counts;
//   - should_we_balance prefers the first idle CPU of an idle core;
//   - newidle_balance is gated by avg_idle < the lowest domain's
//     max_newidle_lb_cost (v5.2: sysctl_sched_migration_cost);
//   - NUMA: adjust_numa_imbalance lets a lightly loaded node keep up to
//     imb_numa_nr tasks' worth of imbalance (2 or fewer tasks: none moves);
//   - sd_init of v6.6: busy_factor 16, imbalance_pct 117 above the LLC, a
//     busy interval one jiffy shorter.
//
// Capacity reduced by RT and deadline time (rtcap.go) enters as in the
// kernel: group capacities are the cached sgc->capacity, a busy CPU with
// one fair task and reduced capacity makes its group group_misfit_task
// for an idle destination (migrate_load of its load), find_busiest_queue
// compares loads per capacity, and need_active_balance pulls such a task
// to an idle CPU with more capacity.
//
// Not modelled (the machines have none of it): the asymmetric-capacity
// group_misfit_task and migrate_misfit, group_asym_packing
// (SD_ASYM_PACKING), IRQ time,
// smt_vs_nonsmt_groups (every group of a level has the same flags here),
// the energy model's overutilized bail-out, UTIL_EST (util_avg stands for
// it), cgroups (task_h_load is the task's load_avg).

// migrationType is v6.6 enum migration_type.
type migrationType uint8

const (
	migrateLoad migrationType = iota
	migrateUtil
	migrateTask
	migrateMisfit // asymmetric capacity only: never set here (reduced capacity is migrate_load)
)

func (m migrationType) String() string {
	return [...]string{"migrate_load", "migrate_util", "migrate_task", "migrate_misfit"}[m]
}

// groupType66 is v6.6 enum group_type, from least to most busy.
type groupType66 uint8

const (
	groupHasSpare groupType66 = iota
	groupFullyBusy
	groupMisfitTask66 // here only a CPU whose capacity RT/deadline time reduced (rtcap.go)
	groupSMTBalance
	groupAsymPacking // SD_ASYM_PACKING only: never set here
	groupImbalanced66
	groupOverloaded66
)

func (g groupType66) String() string {
	return [...]string{"group_has_spare", "group_fully_busy", "group_misfit_task", "group_smt_balance",
		"group_asym_packing", "group_imbalanced", "group_overloaded"}[g]
}

// sgStats66 is v6.6 struct sg_lb_stats (with the sched_group flags and
// cores the decisions read).
type sgStats66 struct {
	group         cpumask.Mask
	avgLoad       int64 // only computed for an overloaded group (or local, by calculate_imbalance)
	groupLoad     int64
	groupCapacity int64
	groupUtil     int64
	groupRunnable int64
	sumNrRunning  int
	sumHNrRunning int
	idleCPUs      int
	groupWeight   int
	cores         int // sg->cores
	numa, pref    int // nr_numa_running, nr_preferred_running
	// misfitLoad is group_misfit_task_load: on a symmetric machine, the
	// largest cpu_load of a CPU whose single fair task runs at a
	// capacity RT or deadline time reduced (sched_reduced_capacity).
	misfitLoad    int64
	gtype         groupType66
	smt           bool // sg->flags & SD_SHARE_CPUCAPACITY: the group is a core's threads
	preferSibling bool // sg->flags & SD_PREFER_SIBLING
}

// sdStats66 is v6.6 struct sd_lb_stats.
type sdStats66 struct {
	haveBusiest   bool
	busiest       sgStats66
	local         sgStats66
	totalLoad     int64
	totalCapacity int64
	avgLoad       int64
	sumUtil       int64
	preferSibling bool
}

// lb66Stats counts the era-6.6 balancer's decisions (BalanceStats).
type lb66Stats struct {
	imb   [4]int64 // passes that found an imbalance, by migration type
	moved [4]int64 // tasks detached, by migration type
}

// imbPct66 is sd->imbalance_pct of v6.6 sd_init: 110 between SMT
// siblings, 117 everywhere else (v5.2 had 125 above the LLC).
func imbPct66(d *machine.Domain) int64 {
	if d.Level == machine.LevelSMT {
		return 110
	}
	return 117
}

// busyFactor66 is sd->busy_factor of v6.6 sd_init (v5.2: 32).
const busyFactor66 = 16

// balanceIntervalNS66 is v6.6 get_sd_balance_interval: as v5.2's, with
// busy_factor 16 and, on a busy CPU, one jiffy less so that the levels'
// periods are not multiples of each other.
func (s *Sim) balanceIntervalNS66(ds *domState, busy bool) int64 {
	ms := ds.balanceIntervalMS
	if busy {
		ms *= busyFactor66
	}
	j := (ms*Millisecond + s.tickNS - 1) / s.tickNS
	if busy {
		j--
	}
	maxJ := s.k.Get(knob.HZ) * int64(s.topo.NCPU) / 10
	j = min(max(j, 1), max(maxJ, 1))
	return j * s.tickNS
}

// imbNumaNr is sd->imb_numa_nr (v6.6 build_sched_domains) for level di of
// c: at the first level above the LLC, the number of LLCs it spans (or an
// eighth of its CPUs when it spans one LLC, as the package level does
// when the LLC is the whole socket), scaled at the levels above by how
// many times wider they are than the first NUMA level.
func (s *Sim) imbNumaNr(c *cpu, di int) int {
	doms := c.domains()
	imb, imbSpan := 0, 1
	for i := 0; i <= di; i++ {
		sd := doms[i]
		w := sd.Span.Weight()
		if !sd.ShareLLC && i > 0 && doms[i-1].ShareLLC {
			// The first level above the LLC. When it is a NUMA level,
			// the package level (x86's DIE) below it spanned just the
			// LLC: build_sched_domains set imb_numa_nr on that level (one
			// LLC) before dropping it as degenerate, and this level, as
			// wide as imb_span, inherits it times 1 (kernel/sched/topology.c,
			// 6.1 and 6.12).
			llc, pkg := doms[i-1].Span.Weight(), w
			if sd.Level == machine.LevelNUMA {
				pkg = llc
			}
			if nrLLCs := pkg / llc; nrLLCs == 1 {
				imb = pkg >> 3
			} else {
				imb = nrLLCs
			}
			imb = max(1, imb)
			if i == di {
				return imb
			}
			imbSpan = w
			for j := i + 1; j < len(doms) && sd.Level != machine.LevelNUMA; j++ {
				if doms[j].Level == machine.LevelNUMA {
					imbSpan = doms[j].Span.Weight()
					break
				}
			}
			continue
		}
		if i == di {
			return imb * max(1, w/imbSpan)
		}
	}
	return imb
}

// adjustNumaImbalance is v6.6 adjust_numa_imbalance: while the destination
// runs no more than imb_numa_nr tasks, an imbalance of up to
// NUMA_IMBALANCE_MIN (2) tasks is left alone, so a pair of communicating
// tasks stays on its node.
func adjustNumaImbalance(imbalance int64, dstRunning, imbNumaNr int) int64 {
	if dstRunning > imbNumaNr {
		return imbalance
	}
	if imbalance <= 2 {
		return 0
	}
	return imbalance
}

// cpuUtil66 is cpu_util_cfs (without UTIL_EST), capped at the capacity.
func (s *Sim) cpuUtil66(c *cpu) int64 { return min(c.util.at(s.now), 1024) }

// cpuUtilBoost66 is cpu_util_cfs_boost: max(util_avg, runnable_avg),
// capped at the capacity.
func (s *Sim) cpuUtilBoost66(c *cpu) int64 {
	return min(max(c.util.at(s.now), c.runnableAvg.at(s.now)), 1024)
}

// groupHasCapacity66 is v6.6 group_has_capacity: fewer tasks than CPUs,
// or (unless runnable time exceeds the capacity by the margin) utilisation
// below it by the margin.
func groupHasCapacity66(pct int64, sgs *sgStats66) bool {
	if sgs.sumNrRunning < sgs.groupWeight {
		return true
	}
	if sgs.groupCapacity*pct < sgs.groupRunnable*100 {
		return false
	}
	return sgs.groupCapacity*100 > sgs.groupUtil*pct
}

// groupIsOverloaded66 is v6.6 group_is_overloaded: more tasks than CPUs
// and utilisation or runnable time above the capacity by the margin.
func groupIsOverloaded66(pct int64, sgs *sgStats66) bool {
	if sgs.sumNrRunning <= sgs.groupWeight {
		return false
	}
	if sgs.groupCapacity*100 < sgs.groupUtil*pct {
		return true
	}
	return sgs.groupCapacity*pct < sgs.groupRunnable*100
}

// groupClassify66 is v6.6 group_classify (no misfit or asym-packing
// groups here). smtBalance is sgs->group_smt_balance.
func (s *Sim) groupClassify66(sd *machine.Domain, sgs *sgStats66, smtBalance bool) groupType66 {
	pct := imbPct66(sd)
	switch {
	case groupIsOverloaded66(pct, sgs):
		return groupOverloaded66
	case *s.sgImbalance(sd.Level, sgs.group.First()):
		return groupImbalanced66
	case smtBalance:
		return groupSMTBalance
	case sgs.misfitLoad != 0:
		return groupMisfitTask66
	case !groupHasCapacity66(pct, sgs):
		return groupFullyBusy
	}
	return groupHasSpare
}

// groupCores is sg->cores: the cores with a thread in g.
func (s *Sim) groupCores(g cpumask.Mask) int {
	n := 0
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		sib := s.topo.SiblingsOf(id)
		for j := sib.First(); j >= 0; j = sib.Next(j + 1) {
			if g.Test(j) {
				if j == id {
					n++
				}
				break
			}
		}
	}
	return n
}

// updateSGStats66 is v6.6 update_sg_lb_stats. It reports whether a CPU
// of the group has more than one task (SG_OVERLOAD).
func (s *Sim) updateSGStats66(env *lbEnv, g cpumask.Mask, sgs *sgStats66, local bool) (overload bool) {
	*sgs = sgStats66{group: g}
	// A group's flags are its child domain's (build_sched_groups).
	if env.child != nil {
		sgs.smt = env.child.Level == machine.LevelSMT
		sgs.preferSibling = env.child.PreferSibling
	}
	numa := env.sd.Level == machine.LevelNUMA && s.k.On(knob.NUMA_BALANCING)
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		if !env.cpus.Test(id) {
			continue
		}
		o := s.cpus[id]
		load := o.loadAvg.at(s.now) // cpu_load: blocked load included
		sgs.groupLoad += load
		sgs.groupUtil += s.cpuUtil66(o)
		sgs.groupRunnable += o.runnableAvg.at(s.now)
		sgs.sumHNrRunning += o.nr
		sgs.sumNrRunning += o.nrRunning()
		if o.nrRunning() > 1 {
			overload = true
		}
		if numa {
			n, p := s.numaRunning(o)
			sgs.numa += n
			sgs.pref += p
		}
		if o.nr == 0 && o.idle() {
			sgs.idleCPUs++
			continue
		}
		// A task running on a CPU with reduced capacity (6.1 and 6.12
		// update_sg_lb_stats, sched_reduced_capacity: one fair task;
		// the misfit check proper needs SD_ASYM_CPUCAPACITY).
		if !local && env.idle != cpuNotIdle && o.nr == 1 && checkCPUCapacity(o, imbPct66(env.sd)) {
			sgs.misfitLoad = max(sgs.misfitLoad, load)
		}
	}
	sgs.groupWeight = g.Weight()
	sgs.groupCapacity = s.groupCapacity(env.sd.Level, g.First(), sgs.groupWeight) // group->sgc->capacity
	sgs.cores = s.groupCores(g)
	// smt_balance: an idle destination should relieve an SMT core that
	// runs more than one task.
	smtBalance := s.fair.smtBalance && !local && env.idle != cpuNotIdle && sgs.smt && sgs.sumHNrRunning > 1
	sgs.gtype = s.groupClassify66(env.sd, sgs, smtBalance)
	if sgs.gtype == groupOverloaded66 {
		sgs.avgLoad = sgs.groupLoad * 1024 / sgs.groupCapacity
	}
	return overload
}

// pickBusiest66 is v6.6 update_sd_pick_busiest (without its asymmetric
// capacity and asym-packing cases, and smt_vs_nonsmt_groups, which is
// never true when every group of a level has the same flags).
func (s *Sim) pickBusiest66(sds *sdStats66, sgs *sgStats66) bool {
	b := &sds.busiest
	if sgs.sumHNrRunning == 0 {
		return false // nothing to pull
	}
	if sgs.gtype != b.gtype {
		return sgs.gtype > b.gtype
	}
	switch sgs.gtype {
	case groupOverloaded66:
		// the highest avg_load
		return sgs.avgLoad > b.avgLoad
	case groupImbalanced66:
		return false // the first one
	case groupMisfitTask66:
		// the biggest misfit (reduced capacity: the most loaded)
		return sgs.misfitLoad > b.misfitLoad
	case groupSMTBalance:
		if sgs.idleCPUs != 0 || b.idleCPUs != 0 {
			return busierSpare(sgs, b)
		}
		fallthrough
	case groupFullyBusy:
		// avg_load is not computed for these (0): the last group
		// wins, except that an SMT busiest is kept; before the SMT
		// rules (6.1), the first group is kept.
		if !s.fair.smtBalance {
			return sgs.avgLoad > b.avgLoad
		}
		if sgs.avgLoad < b.avgLoad {
			return false
		}
		if sgs.avgLoad == b.avgLoad && b.smt {
			return false
		}
		return true
	}
	return busierSpare(sgs, b)
}

// busierSpare is update_sd_pick_busiest's has_spare rule: fewer idle CPUs,
// then more tasks.
func busierSpare(sgs, b *sgStats66) bool {
	if sgs.idleCPUs != b.idleCPUs {
		return sgs.idleCPUs < b.idleCPUs
	}
	return sgs.sumNrRunning > b.sumNrRunning
}

// updateSDStats66 is v6.6 update_sd_lb_stats, groups visited from the
// local one on.
func (s *Sim) updateSDStats66(env *lbEnv, sds *sdStats66) {
	groups := env.sd.Groups
	overload := false
	var tmp sgStats66
	sds.busiest.idleCPUs = int(^uint(0) >> 1) // init_sd_lb_stats: the worst
	for k := range groups {
		g := groups[(env.localIdx+k)%len(groups)]
		sgs := &tmp
		if k == 0 {
			sgs = &sds.local
			s.updateGroupCapacity(env)
		}
		if s.updateSGStats66(env, g, sgs, k == 0) {
			overload = true
		}
		if k > 0 && s.pickBusiest66(sds, sgs) {
			sds.busiest = *sgs
			sds.haveBusiest = true
		}
		sds.totalLoad += sgs.groupLoad
		sds.totalCapacity += sgs.groupCapacity
		sds.sumUtil += sgs.groupUtil
	}
	if sds.haveBusiest {
		sds.preferSibling = sds.busiest.preferSibling
	}
	if env.sd.Level == machine.LevelNUMA {
		env.fbq = fbqAll
		if s.k.On(knob.NUMA_BALANCING) && sds.haveBusiest {
			env.fbq = fbqClassify(sds.busiest.sumHNrRunning, sds.busiest.numa, sds.busiest.pref)
		}
	}
	if env.root {
		s.overloaded = overload
	}
	if env.idle != cpuNewlyIdle && env.llc {
		// update_idle_cpu_scan (SIS_UTIL)
		s.llcs[s.topo.LLC[env.this.id]].nrIdleScan = nrIdleScan(sds.sumUtil, int64(env.sd.Span.Weight()), imbPct66(env.sd))
	}
}

// siblingImbalance is v6.6 sibling_imbalance: the tasks to move so both
// groups run as many tasks per core (twice that, rounded; at least 2 when
// the local group is empty and busiest has several).
func siblingImbalance(env *lbEnv, sds *sdStats66) int64 {
	b, l := &sds.busiest, &sds.local
	if env.idle == cpuNotIdle || b.sumNrRunning == 0 {
		return 0
	}
	nb, nl := int64(b.cores), int64(l.cores)
	if nb == nl {
		return max(0, int64(b.sumNrRunning-l.sumNrRunning))
	}
	imb := max(0, nl*int64(b.sumNrRunning)-nb*int64(l.sumNrRunning))
	imb = (2*imb + nl + nb) / (nl + nb)
	if imb <= 1 && l.sumNrRunning == 0 && b.sumNrRunning > 1 {
		imb = 2
	}
	return imb
}

// siblingImbalanceOrNr is the task imbalance calculate_imbalance and
// find_busiest_group's prefer-sibling test use: sibling_imbalance with the
// SMT rules (v6.6), or before them (6.1) busiest's tasks less local's,
// with no per-core normalisation.
func (s *Sim) siblingImbalanceOrNr(env *lbEnv, sds *sdStats66) int64 {
	if s.fair.smtBalance {
		return siblingImbalance(env, sds)
	}
	return max(0, int64(sds.busiest.sumNrRunning-sds.local.sumNrRunning))
}

// calculateImbalance66 is v6.6 calculate_imbalance: it sets the migration
// type and the imbalance in its unit.
func (s *Sim) calculateImbalance66(env *lbEnv, sds *sdStats66) {
	local, busiest := &sds.local, &sds.busiest
	switch busiest.gtype {
	case groupMisfitTask66:
		// No SD_ASYM_CPUCAPACITY: move the load of the CPU whose
		// capacity RT or deadline time reduced.
		env.migration, env.imbalance = migrateLoad, busiest.misfitLoad
		return
	case groupSMTBalance, groupImbalanced66:
		// Reduce the tasks sharing a core; or, when affinity skewed the
		// averages, move any task and let the next pass even it out.
		env.migration, env.imbalance = migrateTask, 1
		return
	}
	if local.gtype == groupHasSpare {
		if busiest.gtype > groupFullyBusy && !env.sd.ShareLLC {
			// Fill the local group's spare capacity from an
			// overloaded group in another LLC.
			env.migration = migrateUtil
			env.imbalance = max(local.groupCapacity, local.groupUtil) - local.groupUtil
			if env.idle != cpuNotIdle && env.imbalance == 0 {
				env.migration, env.imbalance = migrateTask, 1
			}
			return
		}
		env.migration = migrateTask
		if busiest.groupWeight == 1 || sds.preferSibling {
			env.imbalance = s.siblingImbalanceOrNr(env, sds)
		} else {
			// Even out the idle CPUs.
			env.imbalance = max(0, int64(local.idleCPUs-busiest.idleCPUs))
		}
		if env.sd.Level == machine.LevelNUMA {
			env.imbalance = adjustNumaImbalance(env.imbalance, local.sumNrRunning+1, s.imbNumaNr(env.this, env.di))
		}
		env.imbalance >>= 1
		return
	}
	if local.gtype < groupOverloaded66 {
		// The local group will become overloaded: only now do the
		// avg_load figures matter.
		local.avgLoad = local.groupLoad * 1024 / local.groupCapacity
		if local.avgLoad >= busiest.avgLoad {
			env.imbalance = 0
			return
		}
		sds.avgLoad = sds.totalLoad * 1024 / sds.totalCapacity
		if local.avgLoad >= sds.avgLoad {
			env.imbalance = 0
			return
		}
	}
	// Bring both groups towards the domain average, neither past it.
	env.migration = migrateLoad
	env.imbalance = min((busiest.avgLoad-sds.avgLoad)*busiest.groupCapacity,
		(sds.avgLoad-local.avgLoad)*local.groupCapacity) / 1024
}

// findBusiestGroup66 is v6.6 find_busiest_group, its decision matrix:
// an imbalanced busiest is forced; a local group busier than busiest is
// balanced; overloaded against overloaded compares avg_load with
// imbalance_pct; a local group with spare capacity pulls when
// sibling_imbalance says more than one task (SD_PREFER_SIBLING); a busiest
// group that is not overloaded is left to idle CPUs, and only when it has
// at least two fewer idle CPUs (or is one CPU) and a task waiting.
func (s *Sim) findBusiestGroup66(env *lbEnv, sds *sdStats66) bool {
	s.updateSDStats66(env, sds)
	env.imbalance = 0
	if !sds.haveBusiest {
		return false
	}
	local, busiest := &sds.local, &sds.busiest
	// Misfit (here: reduced-capacity) and imbalanced groups are forced.
	if busiest.gtype != groupImbalanced66 && busiest.gtype != groupMisfitTask66 {
		if local.gtype > busiest.gtype {
			return false
		}
		if local.gtype == groupOverloaded66 {
			if local.avgLoad >= busiest.avgLoad {
				return false
			}
			sds.avgLoad = sds.totalLoad * 1024 / sds.totalCapacity
			if local.avgLoad >= sds.avgLoad {
				return false
			}
			if 100*busiest.avgLoad <= imbPct66(env.sd)*local.avgLoad {
				return false
			}
		}
		force := sds.preferSibling && local.gtype == groupHasSpare && s.siblingImbalanceOrNr(env, sds) > 1
		if !force && busiest.gtype != groupOverloaded66 {
			if env.idle == cpuNotIdle {
				return false // let an idle CPU pull
			}
			// (group_smt_balance against a non-SMT local group: never
			// here, every group of a level has the same flags)
			if busiest.groupWeight > 1 && local.idleCPUs <= busiest.idleCPUs+1 {
				return false
			}
			if busiest.sumHNrRunning == 1 {
				return false // no task waiting
			}
		}
	}
	s.calculateImbalance66(env, sds)
	if env.imbalance != 0 {
		s.lb.s66.imb[env.migration]++
	}
	return env.imbalance != 0
}

// findBusiestQueue66 is v6.6 find_busiest_queue: by migration type, the
// CPU of the busiest group with the most load (skipping one whose only
// task outweighs the imbalance), the most utilisation among CPUs with a
// task waiting, or the most tasks. At a NUMA level, CPUs whose tasks are
// better placed than the group's are skipped (fbq_type).
func (s *Sim) findBusiestQueue66(env *lbEnv, g cpumask.Mask) *cpu {
	var best *cpu
	var bestLoad, bestUtil int64
	bestCap := int64(1)
	bestNr := 0
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		if !env.cpus.Test(id) {
			continue
		}
		o := s.cpus[id]
		if s.fbqClassifyRQ(env, o) > env.fbq {
			continue
		}
		nr := o.nr
		if nr == 0 {
			continue
		}
		switch env.migration {
		case migrateLoad:
			// cpu_load against the imbalance unscaled, unless RT or
			// deadline time reduced the CPU's capacity; against the
			// other CPUs per capacity (load_i·cap_j > load_j·cap_i).
			load := o.loadAvg.at(s.now)
			if nr == 1 && load > env.imbalance && !checkCPUCapacity(o, imbPct66(env.sd)) {
				continue
			}
			if load*bestCap > bestLoad*o.capacity {
				best, bestLoad, bestCap = o, load, o.capacity
			}
		case migrateUtil:
			if nr <= 1 {
				continue // its one task cannot be detached
			}
			u := s.cpuUtil66(o)
			if s.fair.smtBalance {
				u = s.cpuUtilBoost66(o) // cpu_util_cfs_boost
			}
			if bestUtil < u {
				best, bestUtil = o, u
			}
		case migrateTask:
			if bestNr < nr {
				best, bestNr = o, nr
			}
		}
	}
	return best
}

// detachTasks66 is v6.6 detach_tasks followed by attach_tasks: the walk of
// v5.2 (cfs_tasks from the tail, loop_max, a breather every 32), but what
// is moved is counted in the migration type's unit: load (a task whose
// load, halved once per failed pass, exceeds what is left is skipped),
// utilisation (a task above what is left is skipped) or tasks.
func (s *Sim) detachTasks66(env *lbEnv) int {
	src := env.src
	if src.nrRunning() <= 1 {
		// Emptied meanwhile: no task was tested.
		env.flags &^= lbfAllPinned
		return 0
	}
	if env.imbalance <= 0 {
		return 0
	}
	cands := s.sortedCands(src)
	detached := s.lb.detached[:0]
	for i := 0; i < len(cands); {
		p := cands[i]
		if env.idle != cpuNotIdle && src.nrRunning() <= 1 {
			break
		}
		env.loop++
		if env.loop > env.loopMax {
			break
		}
		if env.loop > env.loopBreak {
			// LBF_NEED_BREAK: attach what was detached, come back to
			// the same task.
			env.loopBreak += nrMigrateBreak
			continue
		}
		i++
		if !s.canMigrateTask(p, env) {
			s.cfsListAdd(p)
			continue
		}
		switch env.migration {
		case migrateLoad:
			load := max(p.load.at(s.now), 1) // task_h_load, at least 1
			// shr_bound: relaxed after failed passes.
			if load>>min(env.ds.nrBalanceFailed, 63) > env.imbalance {
				s.cfsListAdd(p)
				continue
			}
			env.imbalance -= load
		case migrateUtil:
			u := p.util.at(s.now) // task_util_est
			if s.fair.utilShrBound {
				// 6.1.y stable: relaxed after failed passes, as load is.
				u >>= min(env.ds.nrBalanceFailed, 63)
			}
			if u > env.imbalance {
				s.cfsListAdd(p)
				continue
			}
			env.imbalance -= u
		case migrateTask:
			env.imbalance--
		}
		s.class.detachTask(src, p, env.dst)
		detached = append(detached, p)
		s.lb.s66.moved[env.migration]++
		if env.idle == cpuNewlyIdle && s.fair.newidleDetachOne {
			break // CONFIG_PREEMPTION: one task per newly idle pass
		}
		if env.imbalance <= 0 {
			break
		}
	}
	for i := len(detached) - 1; i >= 0; i-- {
		p := detached[i]
		s.class.attachTask(env.dst, p, env.dst)
		if env.idle != cpuNewlyIdle {
			s.wakeForPulledAt(env.dst, p, env.payer, env.at)
		}
	}
	n := len(detached)
	clear(cands)
	clear(detached)
	s.lb.cands, s.lb.detached = cands[:0], detached[:0]
	return n
}

// shouldWeBalance66 is v6.6 should_we_balance: a newly idle CPU balances
// unless work has arrived; otherwise the first idle CPU of the local group
// on an idle core (any idle CPU at the SMT level), else the first idle CPU
// with busy siblings, else the group's first CPU. Without the SMT rules
// (6.1's should_we_balance) the first idle CPU balances.
func (s *Sim) shouldWeBalance66(env *lbEnv) bool {
	if !env.cpus.Test(env.dst.id) {
		return false
	}
	if env.idle == cpuNewlyIdle {
		return env.dst.nr == 0 && env.dst.wakePending == 0
	}
	g := env.sd.Groups[env.localIdx]
	idleSMT := -1
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		if !env.cpus.Test(id) || !s.cpus[id].idle() {
			continue
		}
		// (6.1, before the SMT rules: the first idle CPU, whatever
		// its siblings do.)
		if s.fair.smtBalance && env.sd.Level != machine.LevelSMT && !s.coreIdle66(id) {
			if idleSMT < 0 {
				idleSMT = id
			}
			continue
		}
		return id == env.dst.id
	}
	if idleSMT >= 0 {
		return idleSMT == env.dst.id
	}
	return g.First() == env.dst.id
}

// coreIdle66 is is_core_idle: every thread of cpu's core is idle.
func (s *Sim) coreIdle66(cpu int) bool {
	sib := s.topo.SiblingsOf(cpu)
	for j := sib.First(); j >= 0; j = sib.Next(j + 1) {
		if j != cpu && !s.cpus[j].idle() {
			return false
		}
	}
	return true
}

// needActiveBalance66 is v6.6 need_active_balance: an imbalance in
// tasks (imbalanced_active_balance) that failed more than
// cache_nice_tries+2 periodic passes, or an idle CPU with more capacity
// than a source whose single fair task runs at a capacity RT or deadline
// time reduced (6.1 and 6.12 fair.c need_active_balance; rtcap.go),
// pushes the running task (the asym and misfit cases cannot arise here).
func (s *Sim) needActiveBalance66(env *lbEnv) bool {
	if env.migration == migrateTask && env.ds.nrBalanceFailed > env.sd.CacheNiceTries+2 {
		return true
	}
	return s.capOn() && reducedCapacityPull(env, imbPct66(env.sd))
}

// loadBalance66 is v6.6 load_balance() for c at level di; see loadBalance
// for payer and at. It returns the tasks moved and the CPU time taken.
func (s *Sim) loadBalance66(c *cpu, di int, it idleType, cont *bool, payer *cpu, at int64) (int, int64) {
	env := s.newLBEnv(c, di, it, payer, at)
	env.di = di
	doms := c.domains()
	dom, ds := env.sd, env.ds
	var parentImb *bool
	if di+1 < len(doms) {
		parentImb = s.sgImbalance(doms[di+1].Level, dom.Span.First())
	}
	s.stats.lbCalls++

	var (
		cost   int64
		moved  int
		src    *cpu
		sds    sdStats66
		active bool
	)
redo:
	if !s.shouldWeBalance66(&env) {
		cost += s.lbCostSkip(env.dstGrp)
		*cont = false
		goto outBalanced
	}
	cost += s.lbCost(dom)
	sds = sdStats66{}
	if !s.findBusiestGroup66(&env, &sds) {
		goto outBalanced
	}
	src = s.findBusiestQueue66(&env, sds.busiest.group)
	if src == nil {
		goto outBalanced
	}
	env.src = src
	env.flags |= lbfAllPinned
	if src.nrRunning() > 1 {
		env.loopMax = min(int(s.k.Get(knob.SchedNrMigrate)), src.nrRunning())
	moreBalance:
		moved += s.detachTasks66(&env)
		if env.flags&lbfDstPinned != 0 && env.imbalance > 0 {
			env.cpus.Clear(env.dst.id)
			env.dst = s.cpus[env.newDst]
			env.flags &^= lbfDstPinned
			env.loop, env.loopBreak = 0, nrMigrateBreak
			goto moreBalance
		}
		if parentImb != nil && env.flags&lbfSomePinned != 0 && env.imbalance > 0 {
			*parentImb = true
		}
		if env.flags&lbfAllPinned != 0 {
			env.cpus.Clear(src.id)
			if !env.cpus.SubsetOf(env.dstGrp) {
				env.loop, env.loopBreak = 0, nrMigrateBreak
				goto redo
			}
			goto outAllPinned
		}
	}
	if moved == 0 {
		if it != cpuNewlyIdle {
			ds.nrBalanceFailed++
		}
		if s.needActiveBalance66(&env) {
			if src.curr == nil || !src.curr.allowed.Test(c.id) {
				goto outOnePinned
			}
			env.flags &^= lbfAllPinned
			if src.pushTo < 0 {
				// active_load_balance_cpu_stop pushes src's task
				// here and, having pushed it, resets this level's
				// nr_balance_failed (activePushed); a fair task
				// queued behind an RT or deadline curr moves at once.
				if !s.activeStopFair(&env) {
					src.pushTo = c.id
					src.pushLB = true
					src.needResched = true
					s.kick(src, at+s.k.Get(knob.IPINS))
				}
				s.stats.activeBalances++
				active = true
			}
		}
	} else {
		ds.nrBalanceFailed = 0
		s.stats.lbMoved += int64(moved)
	}
	if !active || s.needActiveBalance66(&env) {
		ds.balanceIntervalMS = dom.MinIntervalMS
	}
	return moved, cost

outBalanced:
	// Clear the level above's imbalance flag only if tasks had a chance
	// to move.
	if parentImb != nil && env.flags&lbfAllPinned == 0 {
		*parentImb = false
	}
outAllPinned:
	ds.nrBalanceFailed = 0
outOnePinned:
	if it == cpuNewlyIdle {
		return 0, cost
	}
	if (env.flags&lbfAllPinned != 0 && ds.balanceIntervalMS < maxPinnedIntervalMS) ||
		ds.balanceIntervalMS < dom.MaxIntervalMS {
		ds.balanceIntervalMS *= 2
	}
	return 0, cost
}

// activePushed is the end of v6.6 active_load_balance_cpu_stop: the task
// was pushed from c to dst, so the level of dst spanning c has its
// failure count reset.
func (s *Sim) activePushed(c, dst *cpu) {
	c.pushLB = false
	for i, d := range dst.domains() {
		if d.Span.Test(c.id) {
			dst.doms[i].nrBalanceFailed = 0
			return
		}
	}
}

// updateNewidleCost is v6.6 update_newidle_cost: a level's
// max_newidle_lb_cost rises to a costlier pass at once (restarting the
// decay clock) and otherwise decays by 253/256 once a second. It reports
// whether it decayed.
func (s *Sim) updateNewidleCost(ds *domState, cost int64) bool {
	if cost > ds.maxNewidleLBCost {
		ds.maxNewidleLBCost = cost
		ds.nextDecay = s.now + Second
		return false
	}
	if s.now > ds.nextDecay {
		ds.maxNewidleLBCost = ds.maxNewidleLBCost * 253 / 256
		ds.nextDecay = s.now + Second
		return true
	}
	return false
}

// updateNewidleStats is 6.12's update_newidle_stats (fair.c:12215 of
// 6.12.117, the backport "sched/fair: Proportional newidle balance"): one
// more call at this level, success more successes; every 1024 calls the
// ratio becomes the successes counted and both counts halve.
func updateNewidleStats(ds *domState, success int64) {
	ds.niCall++
	ds.niSuccess += success
	if ds.niCall >= 1024 {
		ds.niRatio = ds.niSuccess
		ds.niCall /= 2
		ds.niSuccess /= 2
	}
}

// newidleBalance66 is v6.6 newidle_balance: skipped when no CPU has a task
// waiting or avg_idle is below the lowest level's max_newidle_lb_cost;
// then level by level while avg_idle covers the cost so far plus the
// level's max_newidle_lb_cost, each level's cost feeding
// update_newidle_cost; it stops once a task was pulled or work arrived.
// skipLLC leaves out the levels the shared runqueue already covered.
//
// With the era's newidleRandom it is sched_balance_newidle of 6.12.117
// (fair.c:12871): NI_RANDOM balances each level with probability
// (2 + newidle_ratio)/1024 — a skipped level counts a failed call and the
// walk goes on to the next level; a level's success is weighted by the
// inverse of that probability, so newidle_ratio estimates its success
// rate ×1024 — and the walk stops once a task was pulled or
// should_we_balance cleared continue_balancing (work arrived), which then
// holds across levels. The dice are a per-CPU stream of the run's seed
// (the kernel's sched_rng is seeded at boot, so its runs differ).
func (s *Sim) newidleBalance66(c *cpu, skipLLC bool) int64 {
	doms := c.domains()
	if len(doms) == 0 {
		return 0
	}
	next := s.now + Second
	if !s.overloaded || c.avgIdle < c.doms[0].maxNewidleLBCost {
		next = min(next, s.idleNextBalance(c, 0))
		c.nextBalance = min(c.nextBalance, next)
		return 0
	}
	cost := int64(0)
	pulled := 0
	cont := true
	for i, dom := range doms {
		ds := &c.doms[i]
		if skipLLC && dom.ShareLLC {
			continue
		}
		next = min(next, s.idleNextBalance(c, i))
		if c.avgIdle < cost+ds.maxNewidleLBCost {
			break
		}
		weight := int64(1)
		if s.k.On(knob.NI_RANDOM) {
			d1k := int64(c.niRand.Uint32() % 1024)
			weight = 1 + ds.niRatio
			if d1k > weight {
				updateNewidleStats(ds, 0)
				s.stats.newidleSkipped++
				continue
			}
			weight = (1024 + weight/2) / weight
		}
		if !s.fair.newidleRandom {
			cont = true // 6.6 declares continue_balancing per level
		}
		var t int64
		pulled, t = s.loadBalance66(c, i, cpuNewlyIdle, &cont, c, s.now+cost)
		if t != 0 && s.fair.newidleRandom {
			success := int64(0)
			if pulled > 0 {
				success = weight
			}
			updateNewidleStats(ds, success)
		}
		s.updateNewidleCost(ds, t)
		cost += t
		if s.fair.newidleRandom {
			if pulled > 0 || !cont {
				break
			}
		} else if pulled > 0 || c.nr > 0 || c.wakePending > 0 {
			break
		}
	}
	return s.endNewidle(c, cost, next)
}
