package engine

import (
	"sort"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Load balancing (kernel-reference.md §3): the scheduler tick, periodic
// balance per domain level at the kernel's intervals (v5.2 parameters:
// busy_factor 32, imbalance_pct 110/117/125), NOHZ idle balance on behalf of
// tickless idle CPUs, newly-idle balance gated by avg_idle, active balance
// of a running task after repeated failures; fork placement
// (find_idlest_cpu) is in balance_fork.go. Group classification and imbalance types follow the
// post-v5.5 rules, which the reference recommends as the single model.

type idleType uint8

const (
	cpuNotIdle idleType = iota
	cpuIdle
	cpuNewlyIdle
)

type groupClass uint8

const (
	groupHasSpare groupClass = iota
	groupFullyBusy
	groupOverloaded
)

type migrationType uint8

const (
	migrateLoad migrationType = iota
	migrateUtil
	migrateTask
)

type groupStats struct {
	mask       cpumask.Mask
	nr         int
	load, util int64
	idleCPUs   int
	weight     int
	capacity   int64
	avgLoad    int64
	class      groupClass
	local      bool
}

// onTick is scheduler_tick on a busy CPU.
func (s *Sim) onTick(c *cpu) {
	if c.curr == nil {
		if c.smtHeld {
			s.schedule(c) // wake_priority_sleeper: re-check the hold
		}
		return
	}
	s.q.schedule(s.topo.NCPU+c.id, s.now+s.tickNS)
	s.settle(c)
	s.updateCurr(c)
	if c.nr > 1 && c.curr.state == TaskRunning && !c.needResched && s.checkPreemptTick(c) {
		c.needResched = true
	}
	s.numaCheck(c)
	if s.k.On(knob.LB_PERIODIC) {
		if s.now >= c.nextBalance {
			s.rebalanceDomains(c, cpuNotIdle)
		}
		s.nohzBalancerKick(c)
	}
	if c.curr != nil && c.needResched && userPhase(c.curr) {
		s.schedule(c)
	}
}

// balanceIntervalNS is get_sd_balance_interval.
func (s *Sim) balanceIntervalNS(dom *machine.Domain, ds *domState, busy bool) int64 {
	ms := ds.balanceIntervalMS
	if busy {
		ms *= int64(dom.BusyFactor)
	}
	j := ms * Millisecond / s.tickNS
	maxJ := s.k.Get(knob.HZ) * int64(s.topo.NCPU) / 10
	j = min(max(j, 1), max(maxJ, 1))
	return j * s.tickNS
}

// rebalanceDomains walks c's domains bottom-up and balances those whose
// interval has expired.
func (s *Sim) rebalanceDomains(c *cpu, it idleType) {
	next := s.now + 60*Second
	cont := true
	busy := it == cpuNotIdle
	maxCost := int64(0)
	for i, dom := range c.domains() {
		ds := &c.doms[i]
		// max_newidle_lb_cost decays by 253/256 once a second.
		if s.now >= ds.nextDecay {
			ds.maxNewidleLBCost = ds.maxNewidleLBCost * 253 / 256
			ds.nextDecay = s.now + Second
		}
		maxCost = max(maxCost, ds.maxNewidleLBCost)
		if !cont {
			continue
		}
		interval := s.balanceIntervalNS(dom, ds, busy)
		if s.now >= ds.lastBalance+interval {
			if s.loadBalance(c, i, it, &cont) > 0 {
				it = cpuNotIdle
				if c.curr == nil && c.nr == 0 {
					it = cpuIdle
				}
				busy = it == cpuNotIdle
			}
			ds.lastBalance = s.now
			interval = s.balanceIntervalNS(dom, ds, busy)
		}
		next = min(next, ds.lastBalance+interval)
	}
	c.maxIdleBalanceCost = max(s.k.Get(knob.SchedMigrationCost), maxCost)
	c.nextBalance = next
}

// nohzBalancerKick lets a busy CPU with waiting tasks wake an idle CPU to
// balance on behalf of all tickless idle CPUs whose balance is due.
func (s *Sim) nohzBalancerKick(c *cpu) {
	if s.now < s.nohzNext {
		return
	}
	// Kick when this CPU has tasks waiting, or when its LLC has more than
	// one busy CPU (packed SMT cores may be spread, or load moved to a
	// less loaded LLC).
	if c.nr < 2 && s.llcBusyCPUs(c.id) < 2 {
		return
	}
	next := s.now + 60*Second
	found := false
	for _, o := range s.cpus {
		if !o.idle() {
			continue
		}
		found = true
		if s.now >= o.nextBalance {
			s.rebalanceDomains(o, cpuIdle)
		}
		next = min(next, o.nextBalance)
	}
	if !found {
		next = s.now + s.tickNS
	}
	s.nohzNext = max(next, s.now+s.tickNS)
}

// llcBusyCPUs is sd_llc_shared->nr_busy_cpus: the CPUs of cpu's LLC that
// are running something.
func (s *Sim) llcBusyCPUs(cpu int) int {
	n := 0
	span := s.topo.LLCOf(cpu)
	for id := span.First(); id >= 0; id = span.Next(id + 1) {
		if s.cpus[id].curr != nil {
			n++
		}
	}
	return n
}

// shouldWeBalance: for periodic balance only the first idle CPU of the
// local group (or its first CPU when none is idle) balances this level.
func (s *Sim) shouldWeBalance(c *cpu, local cpumask.Mask, it idleType) bool {
	if it == cpuNewlyIdle {
		return true
	}
	for id := local.First(); id >= 0; id = local.Next(id + 1) {
		if s.cpus[id].idle() {
			return id == c.id
		}
	}
	return local.First() == c.id
}

// lbCost is the simulated CPU time of one load_balance pass over dom.
func (s *Sim) lbCost(dom *machine.Domain) int64 {
	return s.k.Get(knob.LBBaseNS) + s.k.Get(knob.LBCPUNS)*int64(dom.Span.Weight())
}

// loadBalance is load_balance() for dst c at level di. It returns the
// number of tasks moved to c.
func (s *Sim) loadBalance(c *cpu, di int, it idleType, cont *bool) int {
	dom := c.domains()[di]
	ds := &c.doms[di]
	if it == cpuNotIdle && c.curr != nil {
		s.steal(c, s.lbCost(dom))
	}
	s.stats.lbCalls++
	var stats [64]groupStats
	groups := stats[:0]
	if len(dom.Groups) > len(stats) {
		groups = make([]groupStats, 0, len(dom.Groups))
	}
	localIdx := -1
	for _, g := range dom.Groups {
		gs := s.groupStats(g, dom)
		if g.Test(c.id) {
			gs.local = true
			localIdx = len(groups)
		}
		groups = append(groups, gs)
	}
	if di == len(c.domains())-1 {
		// Root domain: refresh the overload indicator.
		s.overloaded = false
		for _, o := range s.cpus {
			if o.nr > 1 {
				s.overloaded = true
				break
			}
		}
	}
	local := &groups[localIdx]
	if !s.shouldWeBalance(c, local.mask, it) {
		*cont = false
		s.balanced(ds, dom, it)
		return 0
	}
	if it != cpuNewlyIdle && di == s.topo.LLCDomainIdx[c.id] {
		// SIS_UTIL: the LLC-level periodic balance refreshes the scan depth.
		sum := int64(0)
		for i := range groups {
			sum += groups[i].util
		}
		s.llcs[s.topo.LLC[c.id]].nrIdleScan = nrIdleScan(sum, int64(dom.Span.Weight()), dom.ImbalancePct)
	}
	busiest := -1
	for i := range groups {
		if i == localIdx || groups[i].nr == 0 {
			continue
		}
		if busiest < 0 || s.busierGroup(&groups[i], &groups[busiest]) {
			busiest = i
		}
	}
	if busiest < 0 {
		s.balanced(ds, dom, it)
		return 0
	}
	b := &groups[busiest]
	mt, imbalance, ok := s.calculateImbalance(dom, it, local, b)
	if !ok || imbalance <= 0 {
		s.balanced(ds, dom, it)
		return 0
	}
	src := s.findBusiestQueue(b, mt, imbalance, c)
	if src == nil {
		s.balanced(ds, dom, it)
		return 0
	}
	moved := s.detachAttach(src, c, dom, ds, mt, imbalance, it)
	if moved > 0 {
		ds.nrBalanceFailed = 0
		ds.balanceIntervalMS = dom.MinIntervalMS
		s.stats.lbMoved += int64(moved)
		return moved
	}
	if it != cpuNewlyIdle {
		ds.nrBalanceFailed++
	}
	if ds.nrBalanceFailed > dom.CacheNiceTries+2 && src.curr != nil && src.curr.allowed.Test(c.id) &&
		src.pushTo < 0 && src.nr == 1 {
		// Active balance: the stopper on src pushes its running task to c.
		src.pushTo = c.id
		src.needResched = true
		s.kick(src, s.now+s.k.Get(knob.IPINS))
		ds.nrBalanceFailed = dom.CacheNiceTries + 1
		s.stats.activeBalances++
		return 0
	}
	if it != cpuNewlyIdle && ds.balanceIntervalMS < dom.MaxIntervalMS {
		ds.balanceIntervalMS *= 2
	}
	return 0
}

// nrIdleScan is update_idle_cpu_scan (kernel-reference.md §1.7): the
// number of CPUs select_idle_cpu may probe, from the LLC's summed
// utilisation (0..1024 per CPU): 0 once per-CPU utilisation reaches
// 1024·100/pct (85.5% at imbalance_pct 117).
func nrIdleScan(sumUtil, llcWeight, pct int64) int64 {
	x := sumUtil / llcWeight
	t := min(x*x*pct*pct/(10000*1024), 1024)
	y := 1024 - t
	return y * llcWeight / 1024
}

// balanced is the out_balanced path.
func (s *Sim) balanced(ds *domState, dom *machine.Domain, it idleType) {
	ds.nrBalanceFailed = 0
	if it != cpuNewlyIdle && ds.balanceIntervalMS < dom.MaxIntervalMS {
		ds.balanceIntervalMS *= 2
	}
}

func (s *Sim) groupStats(g cpumask.Mask, dom *machine.Domain) groupStats {
	gs := groupStats{mask: g}
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		o := s.cpus[id]
		gs.nr += o.nr
		gs.load += o.runnableLoad.at(s.now)
		gs.util += o.util.at(s.now)
		if o.idle() {
			gs.idleCPUs++
		}
		gs.weight++
	}
	gs.capacity = int64(gs.weight) * 1024
	gs.avgLoad = gs.load * 1024 / gs.capacity
	// nr > weight means tasks are waiting however low the recent
	// utilisation is (the kernel's runnable_avg test); otherwise spare
	// capacity is judged from utilisation against imbalance_pct.
	switch {
	case gs.nr > gs.weight:
		gs.class = groupOverloaded
	case gs.nr < gs.weight || gs.capacity*100 > gs.util*dom.ImbalancePct:
		gs.class = groupHasSpare
	default:
		gs.class = groupFullyBusy
	}
	return gs
}

// busierGroup reports whether a is busier than b (update_sd_pick_busiest).
func (s *Sim) busierGroup(a, b *groupStats) bool {
	if a.class != b.class {
		return a.class > b.class
	}
	switch a.class {
	case groupOverloaded, groupFullyBusy:
		return a.avgLoad > b.avgLoad
	}
	if a.idleCPUs != b.idleCPUs {
		return a.idleCPUs < b.idleCPUs
	}
	return a.nr > b.nr
}

// calculateImbalance is find_busiest_group's balance test followed by
// calculate_imbalance.
func (s *Sim) calculateImbalance(dom *machine.Domain, it idleType, local, b *groupStats) (migrationType, int64, bool) {
	if local.class > b.class {
		return 0, 0, false
	}
	if b.class != groupOverloaded {
		if it == cpuNotIdle {
			return 0, 0, false
		}
		preferSibling := dom.PreferSibling && local.class == groupHasSpare && b.nr > local.nr+1
		if !preferSibling {
			if b.weight > 1 && local.idleCPUs <= b.idleCPUs+1 {
				return 0, 0, false
			}
			if b.nr <= 1 {
				return 0, 0, false
			}
		}
	}
	if local.class == groupHasSpare {
		if b.class == groupOverloaded && !dom.ShareLLC {
			// Fill spare capacity.
			imb := max(local.capacity, local.util) - local.util
			if it != cpuNotIdle && imb == 0 {
				return migrateTask, 1, true
			}
			return migrateUtil, imb, true
		}
		if b.weight == 1 || dom.PreferSibling {
			return migrateTask, int64(max(0, b.nr-local.nr) / 2), true
		}
		return migrateTask, int64(max(0, local.idleCPUs-b.idleCPUs) / 2), true
	}
	if local.class == groupOverloaded || b.class == groupOverloaded {
		if local.class < groupOverloaded {
			// local fully busy: compute the domain average over both.
			local.avgLoad = local.load * 1024 / local.capacity
		}
		if 100*b.avgLoad <= dom.ImbalancePct*local.avgLoad {
			return 0, 0, false
		}
		avg := (b.load + local.load) * 1024 / (b.capacity + local.capacity)
		imb := min((b.avgLoad-avg)*b.capacity, (avg-local.avgLoad)*local.capacity) / 1024
		return migrateLoad, imb, imb > 0
	}
	return 0, 0, false
}

// findBusiestQueue picks the source runqueue inside the busiest group.
func (s *Sim) findBusiestQueue(b *groupStats, mt migrationType, imbalance int64, dst *cpu) *cpu {
	var best *cpu
	var bestVal int64 = -1
	for id := b.mask.First(); id >= 0; id = b.mask.Next(id + 1) {
		o := s.cpus[id]
		if o.nr == 0 {
			continue
		}
		var v int64
		switch mt {
		case migrateLoad:
			l := o.runnableLoad.at(s.now)
			if o.nr == 1 && l > imbalance {
				continue
			}
			v = l
		case migrateUtil:
			if o.nr <= 1 {
				continue
			}
			v = o.util.at(s.now)
		case migrateTask:
			v = int64(o.nr)
		}
		if v > bestVal {
			best, bestVal = o, v
		}
	}
	return best
}

// detachAttach moves queued tasks from src to dst (detach_tasks +
// attach_tasks), least recently run first, skipping pinned and cache-hot
// tasks.
func (s *Sim) detachAttach(src, dst *cpu, dom *machine.Domain, ds *domState, mt migrationType, imbalance int64, it idleType) int {
	if src.nr <= 1 || len(src.tree) == 0 {
		return 0
	}
	cands := append(s.lbCands[:0], src.tree...)
	defer func() { clear(cands); s.lbCands = cands[:0] }()
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].execStart != cands[j].execStart {
			return cands[i].execStart < cands[j].execStart
		}
		return cands[i].ID < cands[j].ID
	})
	nrMigrate := int(s.k.Get(knob.SchedNrMigrate))
	moved := 0
	for loop, t := range cands {
		if loop >= nrMigrate || imbalance <= 0 {
			break
		}
		// Never leave an idle-side pull with the source empty: it would
		// be pulled back (detach_tasks' livelock guard).
		if it != cpuNotIdle && src.nr <= 1 {
			break
		}
		if !s.canMigrate(t, src, dst, dom, ds) {
			continue
		}
		switch mt {
		case migrateLoad:
			l := t.load.at(s.now)
			if l>>min(ds.nrBalanceFailed, 62) > imbalance {
				continue
			}
			imbalance -= l
		case migrateUtil:
			u := t.util.at(s.now)
			if u > imbalance {
				continue
			}
			imbalance -= u
		case migrateTask:
			imbalance--
		}
		s.detachQueued(src, t, dst)
		s.attachQueued(dst, t, dst)
		moved++
		if it != cpuNewlyIdle {
			s.wakeForPulled(dst, t)
		}
	}
	return moved
}

// wakeForPulled makes dst notice a task pulled onto it by periodic or
// NOHZ balance (newly idle balance picks it directly).
func (s *Sim) wakeForPulled(dst *cpu, t *Task) {
	if dst.curr == nil {
		s.kick(dst, s.now+s.k.Get(knob.IPINS)+s.exitLatency(dst))
		return
	}
	if s.checkPreemptWakeup(dst, t) {
		dst.needResched = true
		s.kick(dst, s.now)
	}
}

// canMigrate is can_migrate_task.
func (s *Sim) canMigrate(t *Task, src, dst *cpu, dom *machine.Domain, ds *domState) bool {
	if !t.allowed.Test(dst.id) || t.state != TaskRunnable {
		return false
	}
	hot := s.taskHot(t, src, dst, dom) || s.degradesLocality(t, src, dst, dom)
	if !hot || ds.nrBalanceFailed > dom.CacheNiceTries {
		return true
	}
	s.stats.lbHotSkipped++
	return false
}

// taskHot: a task that ran within sched_migration_cost (or is a buddy) is
// cache hot; SMT siblings share the cache so nothing is hot there.
func (s *Sim) taskHot(t *Task, src, dst *cpu, dom *machine.Domain) bool {
	if dom.Level == machine.LevelSMT {
		return false
	}
	if dst.nr > 0 && (t == src.nextBuddy || t == src.lastBuddy) {
		return true
	}
	mc := s.k.Get(knob.SchedMigrationCost)
	if mc == 0 {
		return false
	}
	return s.now-t.execStart < mc
}

// newidleBalance is idle_balance(): a CPU about to go idle tries to pull
// work, level by level, while its expected idle time covers the cost. It
// returns the CPU time the balancing took.
func (s *Sim) newidleBalance(c *cpu, skipLLC bool) int64 {
	if c.avgIdle < s.k.Get(knob.SchedMigrationCost) || !s.overloaded {
		return 0
	}
	cost := int64(0)
	cont := true
	for i, dom := range c.domains() {
		ds := &c.doms[i]
		if skipLLC && dom.ShareLLC {
			continue // the shared runqueue already covered the LLC
		}
		if c.avgIdle < cost+ds.maxNewidleLBCost {
			break
		}
		t := s.lbCost(dom)
		pulled := s.loadBalance(c, i, cpuNewlyIdle, &cont)
		ds.maxNewidleLBCost = max(ds.maxNewidleLBCost, t)
		cost += t
		if pulled > 0 || c.nr > 0 {
			c.idleStamp = 0
			break
		}
	}
	c.maxIdleBalanceCost = max(c.maxIdleBalanceCost, cost)
	return cost
}
