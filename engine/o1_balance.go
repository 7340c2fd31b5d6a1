package engine

import (
	"math"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Wakeup placement and load balancing of era 2.6-o1, after Linux 2.6.7
// kernel/sched.c (try_to_wake_up, wake_idle, source_load/target_load,
// find_busiest_group, find_busiest_queue, move_tasks, can_migrate_task,
// load_balance, load_balance_newidle, idle_balance, active_load_balance,
// rebalance_tick) and the 2.6.7 domain initialisers of
// include/linux/sched.h (SD_SIBLING_INIT, SD_CPU_INIT, SD_NODE_INIT),
// read, not copied. Written for the 1–2 CPU machines of the 2004 SMT-nice
// measurements; larger machines run with the same rules, with a domain's
// groups taken from the engine's topology.
//
// Load is rq->nr_running × SCHED_LOAD_SCALE (128), smoothed once a tick
// into rq->cpu_load = (cpu_load + load now)/2; the migration source is
// under-estimated (min of the two), the target over-estimated (max).
// There is no NOHZ in 2.6: every CPU ticks, idle or not, and balances its
// domains at balance_interval (× busy_factor when busy), the interval
// doubling up to max_interval while balanced. A CPU going idle runs
// idle_balance over its SD_BALANCE_NEWIDLE domains. 2.6.7 places a forked
// task on the parent's CPU; exec balancing is NUMA-only and not modelled.

const o1LoadScale = 128 // SCHED_LOAD_SCALE

// o1NRCPUs is NR_CPUS of the i386 SMP default configuration, which
// spreads the CPUs' balance ticks (CPU_OFFSET = HZ·cpu/NR_CPUS).
const o1NRCPUs = 8

// o1Dom is a 2.6.7 sched_domain's parameters.
type o1Dom struct {
	minIntervalMS, maxIntervalMS, busyFactor, imbalancePct int64
	cacheHotNS                                             int64
	cacheNiceTries                                         int
	wakeIdle, wakeAffine, wakeBalance, newidle             bool
}

// o1DomOf gives the 2.6.7 initialiser of a level: SD_SIBLING_INIT for SMT
// siblings, SD_NODE_INIT across NUMA nodes, SD_CPU_INIT otherwise (2.6.7
// has no multi-core level). SD_CPU_INIT's cache_hot_time is the generic
// initialiser's 2.5 ms (an architecture could override it; none of the
// 1–2 CPU machines this era is for has a CPU-level domain).
func o1DomOf(d *machine.Domain) o1Dom {
	switch d.Level {
	case machine.LevelSMT:
		return o1Dom{minIntervalMS: 1, maxIntervalMS: 2, busyFactor: 8, imbalancePct: 110,
			wakeIdle: true, wakeAffine: true, newidle: true}
	case machine.LevelNUMA:
		return o1Dom{minIntervalMS: 8, maxIntervalMS: 32, busyFactor: 32, imbalancePct: 125,
			cacheHotNS: 10 * Millisecond, cacheNiceTries: 1}
	}
	return o1Dom{minIntervalMS: 1, maxIntervalMS: 4, busyFactor: 64, imbalancePct: 125,
		cacheHotNS: 2500 * Microsecond, cacheNiceTries: 1, wakeAffine: true, wakeBalance: true, newidle: true}
}

// o1UpdateLoad is rebalance_tick's cpu_load update, once per tick.
func (s *Sim) o1UpdateLoad(c *cpu) {
	c.o1.cpuLoad = (c.o1.cpuLoad + int64(c.nr)*o1LoadScale) / 2
}

func (s *Sim) o1SourceLoad(id int) int64 {
	c := s.cpus[id]
	return min(c.o1.cpuLoad, int64(c.nr)*o1LoadScale)
}

func (s *Sim) o1TargetLoad(id int) int64 {
	c := s.cpus[id]
	return max(c.o1.cpuLoad, int64(c.nr)*o1LoadScale)
}

// o1TaskHot is task_hot against the runqueue's last tick.
func (s *Sim) o1TaskHot(p *Task, d o1Dom) bool {
	lastTick := s.jiffies() * s.tickNS
	return lastTick-p.o1.stamp < d.cacheHotNS
}

// o1SelectTaskRq is 2.6.7's try_to_wake_up up to the enqueue: wake to the
// waker's CPU when a domain spanning both has SD_WAKE_AFFINE and p is
// cache-cold there, or SD_WAKE_BALANCE and the loads are imbalanced by
// half the domain's imbalance_pct — unless that would pull p off an idle
// CPU onto a busy one — then wake_idle: an idle SMT sibling of the chosen
// CPU if it is busy (SD_WAKE_IDLE).
func (s *Sim) o1SelectTaskRq(p *Task, this int, cur *Task, sync bool) *Decision {
	d, cpu := s.beginDecision(p, this, cur, sync)
	newCPU := cpu
	if cpu != this && p.allowed.Test(this) {
		load, thisLoad := s.o1SourceLoad(cpu), s.o1TargetLoad(this)
		// Don't pull the task off an idle CPU to a busy one.
		if !(load < o1LoadScale/2 && thisLoad > o1LoadScale/2) {
			newCPU = cpu
			for _, dom := range s.topo.Domains[this] {
				od := o1DomOf(dom)
				imb := od.imbalancePct + (od.imbalancePct-100)/2
				if (od.wakeAffine && !s.o1TaskHot(p, od)) || (od.wakeBalance && imb*thisLoad <= 100*load) {
					if dom.Span.Test(cpu) {
						newCPU = this
						d.WantAffine = true
						break
					}
				}
			}
		}
	}
	d.Target = newCPU
	chosen := s.o1WakeIdle(newCPU, p)
	stage := StageTarget
	switch {
	case chosen != newCPU:
		stage = StageIdleSMT
	case !s.cpus[chosen].idle():
		stage = StageBusyTarget
	}
	if chosen != cpu && !p.allowed.Test(chosen) {
		chosen = cpu
	}
	if !p.allowed.Test(chosen) {
		chosen = s.fallbackCPU(p, chosen)
		stage = StageFallback
	}
	if p.nrAllowed == 1 {
		stage = StagePinned
		s.stats.pinnedWakeups++
	}
	return s.finishDecision(d, chosen, stage)
}

// o1WakeIdle is wake_idle: cpu if idle, else the first idle allowed CPU
// of its lowest domain when that domain has SD_WAKE_IDLE (the SMT
// siblings).
func (s *Sim) o1WakeIdle(cpu int, p *Task) int {
	if s.probe(cpu) {
		return cpu
	}
	doms := s.topo.Domains[cpu]
	if len(doms) == 0 || !o1DomOf(doms[0]).wakeIdle {
		return cpu
	}
	span := doms[0].Span
	for i := span.First(); i >= 0; i = span.Next(i + 1) {
		if i == cpu || !p.allowed.Test(i) {
			continue
		}
		if s.probe(i) {
			return i
		}
	}
	return cpu
}

// o1GroupPower is a group's cpu_power in 2.6.7's SMT setup: a CPU counts
// SCHED_LOAD_SCALE, each further sibling of a core a tenth of it.
func (s *Sim) o1GroupPower(dom *machine.Domain, gi int) int64 {
	g := dom.Groups[gi]
	if dom.Level == machine.LevelSMT {
		return o1LoadScale * int64(g.Weight())
	}
	p := int64(0)
	seen := -1
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		core := s.topo.Core[id]
		if core == seen {
			p += o1LoadScale / 10
			continue
		}
		seen = core
		p += o1LoadScale
	}
	return p
}

// o1FindBusiestGroup is 2.6.7's find_busiest_group: the group with the
// highest average load per cpu_power, and how many tasks to move.
func (s *Sim) o1FindBusiestGroup(c *cpu, dom *machine.Domain, it idleType) (int, int64) {
	var maxLoad, thisLoad, total, totalPwr int64
	busiest, local := -1, -1
	var busiestPwr, thisPwr int64
	for gi, g := range dom.Groups {
		isLocal := g.Test(c.id)
		avg := int64(0)
		for id := g.First(); id >= 0; id = g.Next(id + 1) {
			if isLocal {
				avg += s.o1TargetLoad(id)
			} else {
				avg += s.o1SourceLoad(id)
			}
		}
		pwr := s.o1GroupPower(dom, gi)
		total += avg
		totalPwr += pwr
		avg = avg * o1LoadScale / pwr
		if isLocal {
			thisLoad, local, thisPwr = avg, gi, pwr
		} else if avg > maxLoad {
			maxLoad, busiest, busiestPwr = avg, gi, pwr
		}
	}
	od := o1DomOf(dom)
	balanced := func() (int, int64) {
		if busiest >= 0 && it != cpuNotIdle && maxLoad > o1LoadScale {
			return busiest, 1
		}
		return -1, 0
	}
	if busiest < 0 || local < 0 || thisLoad >= maxLoad {
		return balanced()
	}
	avgLoad := o1LoadScale * total / totalPwr
	if thisLoad >= avgLoad || 100*maxLoad <= od.imbalancePct*thisLoad {
		return balanced()
	}
	imb := min(maxLoad-avgLoad, avgLoad-thisLoad)
	imb = imb * min(busiestPwr, thisPwr) / o1LoadScale
	if imb < o1LoadScale-1 {
		if maxLoad-thisLoad >= o1LoadScale*2 {
			return busiest, 1
		}
		// Not enough imbalance to move a task, but maybe more CPU
		// power is used by moving one.
		var pwrNow, pwrMove int64
		pwrNow += busiestPwr * min(o1LoadScale, maxLoad)
		pwrNow += thisPwr * min(o1LoadScale, thisLoad)
		pwrNow /= o1LoadScale
		tmp := o1LoadScale * o1LoadScale / busiestPwr
		if maxLoad > tmp {
			pwrMove += busiestPwr * min(o1LoadScale, maxLoad-tmp)
		}
		tmp = o1LoadScale * o1LoadScale / thisPwr
		if maxLoad < tmp {
			tmp = maxLoad
		}
		pwrMove += thisPwr * min(o1LoadScale, thisLoad+tmp)
		pwrMove /= o1LoadScale
		if pwrMove < pwrNow+o1LoadScale/8 {
			return balanced()
		}
		return busiest, 1
	}
	return busiest, (imb + 1) / o1LoadScale
}

// o1FindBusiestQueue is find_busiest_queue: the CPU of the group with the
// highest source_load.
func (s *Sim) o1FindBusiestQueue(g cpumask.Mask) *cpu {
	var best *cpu
	maxLoad := int64(0)
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		if l := s.o1SourceLoad(id); l > maxLoad {
			maxLoad, best = l, s.cpus[id]
		}
	}
	return best
}

// o1CanMigrate is can_migrate_task.
func (s *Sim) o1CanMigrate(p *Task, src *cpu, dst int, od o1Dom, nrFailed int, it idleType) bool {
	if src.curr == p || !p.allowed.Test(dst) {
		return false
	}
	if it == cpuNewlyIdle || nrFailed < od.cacheNiceTries {
		return !s.o1TaskHot(p, od)
	}
	return true
}

// o1MoveTasks is move_tasks: up to max tasks from src to dst, expired
// array first (cache-cold, not running soon), best priority first, each
// list from its tail. It returns how many moved.
func (s *Sim) o1MoveTasks(dst, src *cpu, max int64, od o1Dom, nrFailed int, it idleType) int {
	if max <= 0 || src.nr <= 1 {
		return 0
	}
	r := src.o1
	arrays := [2]int8{1 - r.active, r.active}
	if r.arrays[1-r.active].nrActive == 0 {
		arrays = [2]int8{r.active, -1}
	}
	pulled := 0
	for _, ai := range arrays {
		if ai < 0 {
			break
		}
		a := &r.arrays[ai]
		for prio := 0; prio < o1MaxPrio; prio++ {
			q := a.queue[prio]
			for i := len(q) - 1; i >= 0 && i < len(a.queue[prio]); i-- {
				p := a.queue[prio][i]
				if !s.o1CanMigrate(p, src, dst.id, od, nrFailed, it) {
					continue
				}
				s.detachQueued(src, p, dst)
				s.attachQueued(dst, p, dst)
				s.stats.lbMoved++
				if it != cpuNewlyIdle {
					s.wakeForPulled(dst, p)
				}
				pulled++
				if int64(pulled) >= max {
					return pulled
				}
			}
		}
	}
	return pulled
}

// o1LoadBalance is load_balance (load_balance_newidle when newly idle)
// for c's domain i. It returns the tasks moved and the pass's CPU time.
func (s *Sim) o1LoadBalance(c *cpu, i int, it idleType) (int, int64) {
	dom := c.domains()[i]
	ds := &c.doms[i]
	od := o1DomOf(dom)
	cost := s.lbCost(dom)
	s.stats.lbCalls++
	gi, imb := s.o1FindBusiestGroup(c, dom, it)
	var busiest *cpu
	if gi >= 0 {
		busiest = s.o1FindBusiestQueue(dom.Groups[gi])
	}
	if busiest == nil || busiest == c {
		if it != cpuNewlyIdle && ds.balanceIntervalMS < od.maxIntervalMS {
			ds.balanceIntervalMS *= 2
		}
		return 0, cost
	}
	moved := s.o1MoveTasks(c, busiest, imb, od, ds.nrBalanceFailed, it)
	if it == cpuNewlyIdle {
		return moved, cost
	}
	if moved == 0 {
		ds.nrBalanceFailed++
		if ds.nrBalanceFailed > od.cacheNiceTries+2 {
			s.o1ActiveBalance(busiest, c.id)
			ds.nrBalanceFailed = od.cacheNiceTries
		}
	} else {
		ds.nrBalanceFailed = 0
	}
	ds.balanceIntervalMS = od.minIntervalMS
	return moved, cost
}

// o1ActiveBalance is the migration thread's active_load_balance on
// busiest, asked for by pushCPU: it preempts busiest's task, which makes
// that task movable, and moves one task to a group of idle CPUs of the
// domain spanning both. The engine's stopper pushes curr at the switch
// when no queued task can go.
func (s *Sim) o1ActiveBalance(busiest *cpu, pushCPU int) {
	if busiest.nr <= 1 || busiest.o1.activeBalance {
		return
	}
	var dom *machine.Domain
	di := -1
	for j, d := range busiest.domains() {
		if d.Span.Test(pushCPU) {
			dom, di = d, j
			break
		}
	}
	if dom == nil {
		return
	}
	od := o1DomOf(dom)
	for _, g := range dom.Groups {
		if g.Test(busiest.id) {
			continue
		}
		target := -1
		all := true
		for id := g.First(); id >= 0; id = g.Next(id + 1) {
			if !s.cpus[id].idle() {
				all = false
				break
			}
			target = id
		}
		if !all || target < 0 {
			continue
		}
		dst := s.cpus[target]
		if s.o1MoveTasks(dst, busiest, 1, od, busiest.doms[di].nrBalanceFailed, cpuIdle) == 0 &&
			busiest.curr != nil && busiest.curr.allowed.Test(target) && busiest.pushTo < 0 {
			busiest.pushTo = target
			busiest.needResched = true
			s.kick(busiest, s.now+s.k.Get(knob.IPINS))
			s.stats.activeBalances++
		}
	}
}

// o1RebalanceTick is rebalance_tick for c (the cpu_load update is done
// by the tick itself): every domain whose interval has passed is
// balanced. It returns the CPU time spent.
func (s *Sim) o1RebalanceTick(c *cpu, it idleType) int64 {
	j := s.jiffies() + s.k.Get(knob.HZ)*int64(c.id)/o1NRCPUs
	cost := int64(0)
	next := int64(math.MaxInt64)
	for i, dom := range c.domains() {
		ds := &c.doms[i]
		od := o1DomOf(dom)
		interval := ds.balanceIntervalMS
		if it != cpuIdle {
			interval *= od.busyFactor
		}
		interval = max(interval*s.k.Get(knob.HZ)/1000, 1)
		last := ds.lastBalance / s.tickNS
		if j-last >= interval {
			moved, t := s.o1LoadBalance(c, i, it)
			cost += t
			if moved > 0 {
				it = cpuNotIdle
			}
			ds.lastBalance += interval * s.tickNS
			if j-ds.lastBalance/s.tickNS >= interval {
				// Long idle without ticks cannot happen in 2.6, but a
				// run starts with last_balance at boot: catch up.
				ds.lastBalance = j * s.tickNS
			}
		}
		next = min(next, ds.lastBalance+interval*s.tickNS)
	}
	// The engine calls back when the earliest level is due (the offset
	// is folded into last_balance).
	c.nextBalance = max(next-s.k.Get(knob.HZ)*int64(c.id)/o1NRCPUs*s.tickNS, s.now+s.tickNS)
	return cost
}

// o1IdleBalance is idle_balance: a CPU about to go idle pulls from its
// SD_BALANCE_NEWIDLE domains, bottom up, until one yields a task.
func (s *Sim) o1IdleBalance(c *cpu) int64 {
	cost := int64(0)
	for i, dom := range c.domains() {
		if !o1DomOf(dom).newidle {
			continue
		}
		moved, t := s.o1LoadBalance(c, i, cpuNewlyIdle)
		cost += t
		if moved > 0 {
			break
		}
	}
	if c.nr == 0 {
		c.balanceUntil = max(c.balanceUntil, s.now+cost)
		return 0
	}
	c.idleStamp = 0
	return cost
}

// defaultIdle is the idle loop of a kernel without cpuidle or NOHZ (2.6):
// default_idle halts in the shallowest state and the tick keeps running,
// so every idle CPU balances at its own ticks and rechecks an SMT-nice
// hold.
func (s *Sim) defaultIdle(c *cpu) {
	c.stateEntered = s.now
	c.pollLimitAt = 0
	c.reflected = false
	c.cstate = 0
	if s.idleModel() {
		c.cstate = s.shallowIdle
		s.stats.idleEntries[c.cstate]++
	}
	c.tickStopped = false
	s.q.scheduleTick(s.topo.NCPU+c.id, (s.now/s.tickNS+1)*s.tickNS)
}
