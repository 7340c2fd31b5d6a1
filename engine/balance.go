package engine

import (
	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Load balancing as the v5.2 kernel does it (kernel-reference.md §3; read
// against v5.2.1 kernel/sched/fair.c, linux-5.2.1 mirror commit
// fc4ec72ddfe7848ad451612b56fc6429879e8d7e). The files:
//
//   - balance.go: the tick (trigger_load_balance), rebalance_domains,
//     load_balance with its outcomes (nr_balance_failed, balance_interval,
//     active balance), should_we_balance and the cost of a pass;
//   - balance_groups.go: find_busiest_group before the v5.5 rework
//     (update_sg_lb_stats, group_classify, update_sd_pick_busiest,
//     calculate_imbalance, fix_small_imbalance) and find_busiest_queue;
//   - balance_detach.go: detach_tasks and can_migrate_task (task_hot,
//     migrate_degrades_locality, the pinned-task flags);
//   - balance_idle.go: idle_balance (newly idle) and the NOHZ idle balance
//     kicked by a busy CPU and paid for by the kicked CPU;
//   - balance_fork.go: fork placement (find_idlest_cpu);
//   - balance66.go: era 6.6's balancer (the v5.5 rework as in v6.6),
//     entered from rebalanceDomains and newidleBalance.
//
// Domain parameters are v5.2's sd_init values (machine.newDomain). The
// kernel's sched_feat defaults of v5.2 apply: LB_BIAS off (so source_load
// and target_load are both weighted_cpuload, whatever the load index),
// LB_MIN off, CACHE_HOT_BUDDY on.

type idleType uint8

const (
	cpuNotIdle idleType = iota
	cpuIdle
	cpuNewlyIdle
)

// lb_env flags (v5.2.1 kernel/sched/fair.c, LBF_*).
type lbFlags uint8

const (
	lbfAllPinned lbFlags = 1 << iota
	lbfDstPinned
	lbfSomePinned
)

const (
	// nrMigrateBreak is sched_nr_migrate_break: detach_tasks takes a
	// breather (drops the runqueue lock) every 32 tasks examined.
	nrMigrateBreak = 32
	// maxPinnedIntervalMS is MAX_PINNED_INTERVAL: how far balance_interval
	// may back off when every task was pinned.
	maxPinnedIntervalMS = 512
)

// lbState is the balancer's own state and scratch space.
type lbState struct {
	// seq orders each runqueue's cfs_tasks list: a task gets the next
	// number when it is put at the head (enqueue, pick, or skipped by
	// detach_tasks), so the tail is the lowest number.
	seq int64
	// sgImb is sched_group_capacity->imbalance, shared by every CPU that
	// sees the group: indexed by level × NCPU + the group's first CPU.
	sgImb []bool
	// scratch, reused so a balance pass does not allocate
	cpus     cpumask.Mask // env->cpus
	cands    []*Task
	detached []*Task

	nohzKicks int64 // ILB kicks that ran a NOHZ idle balance
	ilbNS     int64 // CPU time the kicked CPUs spent on it

	s66 lb66Stats // era 6.6's decisions by migration type
}

func (s *Sim) lbInit() {
	if s.lb.cpus.Len() == 0 {
		s.lb.cpus = cpumask.New(s.topo.NCPU)
		s.lb.sgImb = make([]bool, (int(machine.LevelNUMA)+1)*s.topo.NCPU)
	}
}

// sgImbalance is sg_imbalanced's flag for the group of level whose first
// CPU is first.
func (s *Sim) sgImbalance(level machine.Level, first int) *bool {
	return &s.lb.sgImb[int(level)*s.topo.NCPU+first]
}

// cfsListAdd puts t at the head of its runqueue's cfs_tasks list
// (account_entity_enqueue's list_add, pick_next_task_fair's list_move):
// the list is most-recently-used first, and detach_tasks walks it from
// the tail.
func (s *Sim) cfsListAdd(t *Task) {
	s.lb.seq++
	t.cfsSeq = s.lb.seq
}

// takeBalanceLeft is what is left of the balancing an idle CPU was still
// doing when it switches to a task: the task waits for it.
func (s *Sim) takeBalanceLeft(c *cpu) int64 {
	d := max(0, c.balanceUntil-s.now)
	c.balanceUntil = 0
	return d
}

// onTick is scheduler_tick on a busy CPU.
func (s *Sim) onTick(c *cpu) {
	if c.curr == nil {
		if c.smtHeld {
			s.schedule(c) // wake_priority_sleeper: re-check the hold
			return
		}
		s.onIdleInterrupt(c)
		return
	}
	s.q.scheduleTick(s.topo.NCPU+c.id, s.now+s.tickNS)
	s.settle(c)
	s.updateCurr(c)
	if s.class.taskTick(c) {
		c.needResched = true
	}
	s.numaCheck(c)
	if s.k.On(knob.LB_PERIODIC) {
		// trigger_load_balance: SCHED_SOFTIRQ when the CPU's balance is
		// due (its cost is stolen from the running task), then
		// nohz_balancer_kick.
		if s.now >= c.nextBalance {
			if cost := s.class.rebalanceDomains(c, cpuNotIdle, c, s.now); cost > 0 && c.curr != nil {
				s.steal(c, cost)
			}
		}
		s.nohzBalancerKick(c)
	}
	// The tick is an hrtimer interrupt: sleep timers past their soft
	// expiry fire with it.
	s.expireTimers(c)
	if c.curr != nil && c.needResched && userPhase(c.curr) {
		s.schedule(c)
	}
}

// balanceIntervalNS is get_sd_balance_interval: balance_interval ms, ×
// busy_factor on a busy CPU, in jiffies (msecs_to_jiffies rounds up),
// clamped to [1, max_load_balance_interval = HZ·ncpus/10].
// Both are kept with the balance_interval they were computed for.
func (s *Sim) balanceIntervalNS(dom *machine.Domain, ds *domState, busy bool) int64 {
	if ds.ivMS != ds.balanceIntervalMS {
		s.refreshBalanceIntervals(dom, ds)
	}
	if busy {
		return ds.ivBusy
	}
	return ds.ivIdle
}

func (s *Sim) refreshBalanceIntervals(dom *machine.Domain, ds *domState) {
	ds.ivMS = ds.balanceIntervalMS
	ds.ivIdle = s.intervalJiffiesNS(ds.ivMS)
	ds.ivBusy = s.intervalJiffiesNS(ds.ivMS * int64(dom.BusyFactor))
}

func (s *Sim) intervalJiffiesNS(ms int64) int64 {
	j := (ms*Millisecond + s.tickNS - 1) / s.tickNS
	maxJ := s.k.Get(knob.HZ) * int64(s.topo.NCPU) / 10
	j = min(max(j, 1), max(maxJ, 1))
	return j * s.tickNS
}

// A balancerKind is a fair class's load balancer generation (fairRules):
// which load_balance, get_sd_balance_interval and newidle balance run.
type balancerKind uint8

const (
	balancer52 balancerKind = iota // v5.2: load_balance before the v5.5 rework (balance.go, balance_detach.go)
	balancer66                     // v6.6: the reworked balancer (balance66.go)
)

// loadBalanceFair runs the era's load_balance (see loadBalance).
func (s *Sim) loadBalanceFair(c *cpu, di int, it idleType, cont *bool, payer *cpu, at int64) (int, int64) {
	if s.fair.balancer == balancer66 {
		return s.loadBalance66(c, di, it, cont, payer, at)
	}
	return s.loadBalance(c, di, it, cont, payer, at)
}

// balanceInterval is the era's get_sd_balance_interval.
func (s *Sim) balanceInterval(dom *machine.Domain, ds *domState, busy bool) int64 {
	if s.fair.balancer == balancer66 {
		return s.balanceIntervalNS66(ds, busy)
	}
	return s.balanceIntervalNS(dom, ds, busy)
}

// newidleBalanceFair runs the era's newidle balance: v5.2's idle_balance
// or v6.6's newidle_balance (their thresholds, cost bookkeeping and stop
// rules differ; kernelNewidleBalance), or a policy's in their place
// (policy_newidle.go).
func (s *Sim) newidleBalanceFair(c *cpu, skipLLC bool) int64 {
	if s.niPolicy != nil {
		return s.policyNewidle(c, skipLLC)
	}
	return s.kernelNewidleBalance(c, skipLLC)
}

// idleBalance52 is v5.2's idle_balance(): a CPU about to go idle tries to pull
// work, level by level, while its average idle time covers the cost so
// far plus the level's max_newidle_lb_cost. It is skipped when avg_idle is
// below sysctl_sched_migration_cost or no CPU has a task waiting
// (root_domain->overload). It returns the CPU time the balancing took;
// when nothing was pulled the CPU spends that time before it is really
// idle (balanceUntil), so a wakeup meanwhile waits for the rest.
// skipLLC leaves out the levels the shared runqueue already covered.
func (s *Sim) idleBalance52(c *cpu, skipLLC bool) int64 {
	doms := c.domains()
	if len(doms) == 0 {
		return 0
	}
	next := s.now + Second // jiffies + HZ
	if c.avgIdle < s.k.Get(knob.SchedMigrationCost) || !s.overloaded {
		next = min(next, s.idleNextBalance(c, 0))
		c.nextBalance = min(c.nextBalance, next)
		return 0
	}
	cost := int64(0)
	for i, dom := range doms {
		ds := &c.doms[i]
		if skipLLC && dom.ShareLLC {
			continue
		}
		if c.avgIdle < cost+ds.maxNewidleLBCost {
			next = min(next, s.idleNextBalance(c, i))
			break
		}
		cont := true
		pulled, t := s.loadBalance(c, i, cpuNewlyIdle, &cont, c, s.now+cost)
		// The kernel times each level with sched_clock; here a pass
		// costs what it is charged.
		ds.maxNewidleLBCost = max(ds.maxNewidleLBCost, t)
		cost += t
		next = min(next, s.idleNextBalance(c, i))
		if pulled > 0 || c.nr > 0 {
			break
		}
	}
	return s.endNewidle(c, cost, next)
}

// endNewidle is the common end of a newidle balance that ran its levels:
// rq->max_idle_balance_cost follows the pass, a CPU that got work is no
// longer going idle (idle_stamp 0), one that did not is only idle once
// the pass's time is spent, and next_balance takes the levels' earliest.
func (s *Sim) endNewidle(c *cpu, cost, next int64) int64 {
	c.maxIdleBalanceCost = max(c.maxIdleBalanceCost, cost)
	if c.nr > 0 {
		c.idleStamp = 0
	} else {
		c.balanceUntil = max(c.balanceUntil, s.now+cost)
	}
	c.nextBalance = min(c.nextBalance, next)
	return cost
}

// rebalanceDomainsFair is rebalance_domains for c: each domain level,
// bottom-up, is balanced when its interval has expired; max_newidle_lb_cost
// decays by 253/256 once a second and rq->max_idle_balance_cost follows
// the sum over the levels. payer is the CPU doing the work (c itself, or
// the kicked ILB for a tickless idle c), at the time it starts. It returns
// the CPU time the passes took.
func (s *Sim) rebalanceDomainsFair(c *cpu, it idleType, payer *cpu, at int64) int64 {
	next := s.now + 60*Second
	updateNext := false
	cont := true
	needDecay := false
	maxCost := int64(0)
	cost := int64(0)
	for i, dom := range c.domains() {
		ds := &c.doms[i]
		// update_newidle_cost(sd, 0): a cost of 0 never raises the
		// maximum, so this only decays it.
		decayed := s.updateNewidleCost(ds, 0)
		if s.fair.decayLastLevel {
			needDecay = decayed
		} else {
			needDecay = needDecay || decayed
		}
		maxCost += ds.maxNewidleLBCost
		if !cont {
			// Another CPU of the local group balances the levels above;
			// keep walking only to decay their costs.
			if needDecay {
				continue
			}
			break
		}
		interval := s.balanceInterval(dom, ds, it != cpuIdle)
		// SD_SERIALIZE (NUMA level): the kernel's global "balancing"
		// trylock never fails here, passes run one at a time.
		if s.now >= ds.lastBalance+interval {
			moved, t := s.loadBalanceFair(c, i, it, &cont, payer, at+cost)
			cost += t
			if moved > 0 {
				// Tasks were pulled: c is no longer idle for the
				// levels above.
				it = cpuNotIdle
				if c.idle() {
					it = cpuIdle
				}
			}
			ds.lastBalance = s.now
			interval = s.balanceInterval(dom, ds, it != cpuIdle)
		}
		if next > ds.lastBalance+interval {
			next = ds.lastBalance + interval
			updateNext = true
		}
	}
	if needDecay {
		c.maxIdleBalanceCost = max(s.k.Get(knob.SchedMigrationCost), maxCost)
	}
	if updateNext {
		c.nextBalance = next
		// (v6.6 leaves nohz.next_balance to the ILB's NOHZ_NEXT_KICK
		// walk; lowering it when an idle CPU's own balance is done, as
		// v5.2 does, comes to the same.)
		if it == cpuIdle && s.nohzNext > c.nextBalance {
			s.nohzNext = c.nextBalance
		}
	}
	return cost
}

// shouldWeBalance is should_we_balance: newly idle CPUs always balance;
// otherwise only the first idle CPU of the local group (its first CPU when
// none is idle) balances this level and the ones above.
func (s *Sim) shouldWeBalance(env *lbEnv) bool {
	if !env.cpus.Test(env.dst.id) {
		return false
	}
	if env.idle == cpuNewlyIdle {
		return true
	}
	g := env.sd.Groups[env.localIdx]
	for id := g.First(); id >= 0; id = g.Next(id + 1) {
		if env.cpus.Test(id) && s.cpus[id].idle() {
			return id == env.dst.id
		}
	}
	return g.First() == env.dst.id
}

// lbCost is the simulated CPU time of one find_busiest_group pass over dom
// (update_sd_lb_stats reads every CPU of the span).
func (s *Sim) lbCost(dom *machine.Domain) int64 {
	return s.k.Get(knob.LBBaseNS) + s.k.Get(knob.LBCPUNS)*int64(dom.SpanWeight)
}

// lbCostSkip is the cost of a load_balance call that stops at
// should_we_balance, which only looks at the local group.
func (s *Sim) lbCostSkip(g cpumask.Mask) int64 {
	return s.k.Get(knob.LBBaseNS) + s.k.Get(knob.LBCPUNS)*int64(g.Weight())
}

// groupIndex returns the index of the group of dom holding cpu.
func groupIndex(dom *machine.Domain, cpu int) int {
	for i, g := range dom.Groups {
		if g.Test(cpu) {
			return i
		}
	}
	panic("engine: cpu outside its own domain")
}

// newLBEnv sets up the lb_env of a load_balance pass of c at level di.
func (s *Sim) newLBEnv(c *cpu, di int, it idleType, payer *cpu, at int64) lbEnv {
	var env lbEnv
	s.initLBEnv(&env, c, di, it, payer, at)
	return env
}

// initLBEnv sets up *env, which must be zero, for a load_balance pass of c
// at level di (in place: lb_env is 200 bytes).
func (s *Sim) initLBEnv(env *lbEnv, c *cpu, di int, it idleType, payer *cpu, at int64) {
	doms := c.domains()
	env.sd, env.ds = doms[di], &c.doms[di]
	env.this, env.dst, env.idle = c, c, it
	env.cpus = s.lb.cpus
	env.loopBreak, env.fbq = nrMigrateBreak, fbqAll
	env.payer, env.at = payer, at
	if di > 0 {
		env.child = doms[di-1]
	}
	env.localIdx = env.ds.localIdx
	env.di = di
	env.dstGrp = env.sd.Groups[env.localIdx]
	env.cpus.CopyFrom(env.sd.Span) // ∩ cpu_active_mask: every CPU is active
	env.cpusFull = true
	env.llc = di == s.topo.LLCDomainIdx[c.id]
	env.root = di == len(doms)-1
}

// loadBalance is v5.2's load_balance() for this CPU c at domain level di.
// payer is the CPU doing the work and at the time it does this pass (they
// decide when pulled tasks can start). It returns the number of tasks
// moved and the CPU time the pass took.
func (s *Sim) loadBalance(c *cpu, di int, it idleType, cont *bool, payer *cpu, at int64) (int, int64) {
	var env lbEnv
	s.initLBEnv(&env, c, di, it, payer, at)
	doms := c.domains()
	dom, ds := env.sd, env.ds
	// The parent's group holding this domain's span: its imbalance flag
	// tells the level above that pinning defeated this one.
	var parentImb *bool
	if di+1 < len(doms) {
		parentImb = s.sgImbalance(doms[di+1].Level, dom.Span.First())
	}
	s.stats.lbCalls++

	var (
		cost   int64
		moved  int
		src    *cpu
		sds    sdStats
		active bool
	)
redo:
	if !s.shouldWeBalance(&env) {
		cost += s.lbCostSkip(env.dstGrp)
		*cont = false
		goto outBalanced
	}
	cost += s.lbCost(dom)
	sds = sdStats{}
	if !s.findBusiestGroup(&env, &sds) {
		goto outBalanced
	}
	src = s.findBusiestQueue(&env, &sds.busiest)
	if src == nil {
		goto outBalanced
	}
	env.src = src
	if src.nrRunning() > 1 {
		// A single task (the running one) cannot be detached; with
		// nr_running ≤ 1 the pass counts as failed, which is what
		// leads to active balancing.
		env.flags |= lbfAllPinned
		env.loopMax = min(int(s.k.Get(knob.SchedNrMigrate)), src.nrRunning())
	moreBalance:
		moved += s.detachTasks(&env)
		if env.flags&lbfDstPinned != 0 && env.imbalance > 0 {
			// Tasks that may not run on this CPU may run on another
			// CPU of the local group: move them there instead.
			env.cpus.Clear(env.dst.id)
			env.cpusFull = false
			env.dst = s.cpus[env.newDst]
			env.flags &^= lbfDstPinned
			env.loop, env.loopBreak = 0, nrMigrateBreak
			goto moreBalance
		}
		if parentImb != nil && env.flags&lbfSomePinned != 0 && env.imbalance > 0 {
			*parentImb = true
		}
		if env.flags&lbfAllPinned != 0 {
			// Every task of src is pinned away from us: forget src
			// and look again while CPUs outside the local group
			// remain.
			env.cpus.Clear(src.id)
			env.cpusFull = false
			if !env.cpus.SubsetOf(env.dstGrp) {
				env.loop, env.loopBreak = 0, nrMigrateBreak
				goto redo
			}
			goto outAllPinned
		}
	}
	if moved == 0 {
		// Newly idle passes are frequent: they do not count as failures
		// (which would make cache-hot tasks movable and trigger active
		// balances too easily).
		if it != cpuNewlyIdle {
			ds.nrBalanceFailed++
		}
		if s.needActiveBalance(&env) {
			if src.curr == nil || !src.curr.allowed.Test(c.id) {
				env.flags |= lbfAllPinned
				goto outOnePinned
			}
			if src.pushTo < 0 {
				// active_load_balance_cpu_stop: the stopper on src
				// pushes its task to this CPU (a fair task queued
				// behind an RT or deadline curr moves at once).
				if !s.activeStopFair(&env) {
					src.pushTo = c.id
					src.needResched = true
					s.kick(src, at+s.k.Get(knob.IPINS))
				}
				s.stats.activeBalances++
				active = true
			}
			// We've kicked active balancing: force task migration.
			ds.nrBalanceFailed = dom.CacheNiceTries + 1
		}
	} else {
		ds.nrBalanceFailed = 0
		s.stats.lbMoved += int64(moved)
	}
	if !active || s.voluntaryActiveBalance(&env) {
		// Unbalanced (whether or not something moved), or a voluntary
		// active balance: balance this level again soon.
		ds.balanceIntervalMS = dom.MinIntervalMS
	} else if ds.balanceIntervalMS < dom.MaxIntervalMS {
		ds.balanceIntervalMS *= 2
	}
	return moved, cost

outBalanced:
	// Balanced despite any affinity constraints: clear the imbalance
	// flag the level above may have been told about.
	if parentImb != nil {
		*parentImb = false
	}
outAllPinned:
	ds.nrBalanceFailed = 0
outOnePinned:
	// idle_balance ignores balance intervals; backing off on its passes
	// would make the interval skyrocket.
	if it == cpuNewlyIdle {
		return 0, cost
	}
	if (env.flags&lbfAllPinned != 0 && ds.balanceIntervalMS < maxPinnedIntervalMS) ||
		ds.balanceIntervalMS < dom.MaxIntervalMS {
		ds.balanceIntervalMS *= 2
	}
	return 0, cost
}

// needActiveBalance is need_active_balance: voluntary_active_balance, or
// after more than cache_nice_tries+2 failed periodic passes the running
// task itself is pushed.
func (s *Sim) needActiveBalance(env *lbEnv) bool {
	return s.voluntaryActiveBalance(env) || env.ds.nrBalanceFailed > env.sd.CacheNiceTries+2
}

// voluntaryActiveBalance is v5.2.1 voluntary_active_balance: only its
// reduced-capacity case (an idle CPU pulls the single fair task of a CPU
// whose capacity RT or deadline time reduced; rtcap.go) can arise here —
// asym packing and misfit tasks need asymmetric machines.
func (s *Sim) voluntaryActiveBalance(env *lbEnv) bool {
	return s.capOn() && reducedCapacityPull(env, env.sd.ImbalancePct)
}

// nrIdleScan is update_idle_cpu_scan (kernel-reference.md §1.7, a later
// kernel's SIS_UTIL): the number of CPUs select_idle_cpu may probe, from
// the LLC's summed utilisation (0..1024 per CPU): 0 once per-CPU
// utilisation reaches 1024·100/pct (85.5% at imbalance_pct 117).
func nrIdleScan(sumUtil, llcWeight, pct int64) int64 {
	x := sumUtil / llcWeight
	t := min(x*x*pct*pct/(10000*1024), 1024)
	y := 1024 - t
	return y * llcWeight / 1024
}

// wakeForPulled makes dst notice a task moved onto it by the stopper or an
// affinity change (as if pulled by dst itself, now).
func (s *Sim) wakeForPulled(dst *cpu, t *Task) { s.wakeForPulledAt(dst, t, nil, s.now) }

// wakeForPulledAt is attach_task's check_preempt_curr for a task that
// payer attached to dst at time at: an idle dst is woken by an IPI (and
// leaves its C-state) unless it is the CPU doing the balancing; a busy
// one is preempted if the task should run first. Newly idle balance picks
// its pulled tasks directly and does not come here.
func (s *Sim) wakeForPulledAt(dst *cpu, t *Task, payer *cpu, at int64) {
	remote := payer != nil && payer != dst
	if dst.curr == nil {
		if payer == dst {
			s.kick(dst, at)
			return
		}
		from := s.actor
		if payer != nil {
			from = payer.id
		}
		s.kick(dst, at+s.idleWakeDelay(dst, from))
		return
	}
	if s.class.wakeupPreempt(dst, t) {
		dst.needResched = true
		if remote {
			at += s.k.Get(knob.IPINS)
		}
		s.kick(dst, at)
	}
}
