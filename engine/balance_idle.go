package engine

import "schedplay/engine/knob"

// Balancing by CPUs that are idle or about to be: v5.2's idle_balance
// (newly idle) and the NOHZ idle balance (nohz_balancer_kick, kick_ilb,
// _nohz_idle_balance in v5.2.1 kernel/sched/fair.c).

// idleNextBalance is update_next_balance's candidate for level i: its last
// balance plus the idle (not busy) interval.
func (s *Sim) idleNextBalance(c *cpu, i int) int64 {
	ds := &c.doms[i]
	return ds.lastBalance + s.balanceIntervalNS(c.domains()[i], ds, false)
}

// nohzBalancerKick is v5.2's nohz_balancer_kick on a busy CPU's tick
// (6.1's and 6.6's run the same steps for the reasons modelled here):
// the CPU first leaves nohz.idle_cpus_mask (nohz_balance_exit_idle: the
// first busy tick after a tickless idle period); with no CPU left in the
// mask (nohz.nr_cpus == 0) nothing is kicked; otherwise, once
// nohz.next_balance has passed, an idle CPU is kicked to balance on
// behalf of every tickless idle CPU when this CPU has a task waiting
// (nr_running ≥ 2, every class counted), has a fair task and a capacity
// RT or deadline time reduced (check_cpu_capacity; rtcap.go), or its LLC
// has more than one busy CPU (sd_llc_shared->nr_busy_cpus > 1: packed SMT
// cores may be spread, or load moved to a less loaded LLC). The misfit
// and asym-packing reasons never apply here.
func (s *Sim) nohzBalancerKick(c *cpu) {
	if !s.rules.nohz {
		return // idle CPUs tick and balance themselves
	}
	s.nohzExitIdle(c)
	if s.nohzNrCPUs == 0 {
		return // no CPU is tickless idle
	}
	if s.now < s.nohzNext {
		return
	}
	if c.nrRunning() < 2 && !s.reducedCapacityKick(c) && s.llcBusyCPUs(c.id) <= 1 {
		return
	}
	s.kickILB()
}

// nohzEnterIdle is nohz_balance_enter_idle, called when an idle period
// stops c's tick (tick_nohz_idle_stop_tick, on the stop that finds the
// tick running): c joins nohz.idle_cpus_mask unless it is still there
// from an earlier idle period with no busy tick since.
func (s *Sim) nohzEnterIdle(c *cpu) {
	if !s.rules.nohz || c.nohzIdle {
		return
	}
	c.nohzIdle = true
	s.nohzNrCPUs++
}

// nohzExitIdle is nohz_balance_exit_idle: c's bit leaves the mask.
func (s *Sim) nohzExitIdle(c *cpu) {
	if !c.nohzIdle {
		return
	}
	c.nohzIdle = false
	s.nohzNrCPUs--
}

// nohzIdleCPU reports whether o is in nohz.idle_cpus_mask and idle_cpu():
// what find_new_ilb takes and _nohz_idle_balance walks. The mask alone
// is not enough: a CPU that woke keeps its bit until its first busy tick;
// an idle CPU whose governor kept the tick is not in it (it balances
// itself at that tick).
func (s *Sim) nohzIdleCPU(o *cpu) bool { return o.nohzIdle && o.idle() }

// findNewILB is find_new_ilb (v5.2 and 6.x; every CPU is a housekeeping
// one here, and the kicking CPU, which 6.x skips, is busy): the first CPU
// of nohz.idle_cpus_mask that is idle.
func (s *Sim) findNewILB() *cpu {
	for _, o := range s.cpus {
		if s.nohzIdleCPU(o) {
			return o
		}
	}
	return nil
}

// kickILB is kick_ilb followed by the kicked CPU's _nohz_idle_balance.
// The kicked CPU leaves idle for the IPI (exit latency), then walks every
// other idle CPU of nohz.idle_cpus_mask in CPU order, running rebalance_domains on behalf of
// those whose balance is due, and finally balances for itself. All of
// that is its own CPU time: tasks pulled onto other CPUs start after the
// work that preceded their pass, and the kicked CPU is busy until it has
// finished (balanceUntil). The walk is simulated at the kick, with the
// machine as it is then. nohz.next_balance moves a jiffy on before
// find_new_ilb, so a mask whose CPUs are all busy again still uses up
// this jiffy's kick.
func (s *Sim) kickILB() {
	s.nohzNext += s.tickNS // nohz.next_balance++: one kick per jiffy
	ilb := s.findNewILB()
	if ilb == nil {
		return // nr_cpu_ids: no CPU of the mask is idle
	}
	if ilb.balanceUntil > s.now {
		return // its NOHZ_KICK_MASK is still set: no second IPI
	}
	s.lb.nohzKicks++
	start := s.now + s.k.Get(knob.IPINS) + s.exitLatency(ilb)
	t := start
	next := s.now + 60*Second
	updateNext := false
	aborted := false
	for _, o := range s.cpus {
		// for_each_cpu(nohz.idle_cpus_mask), skipping CPUs not idle
		if o == ilb || !s.nohzIdleCPU(o) {
			continue
		}
		if !ilb.idle() {
			// Work arrived for the kicked CPU (need_resched): it
			// stops; the next kick picks the rest up.
			aborted = true
			break
		}
		t += s.k.Get(knob.LBCPUNS) // update_nohz_stats, the next_balance check
		if s.now >= o.nextBalance {
			t += s.class.rebalanceDomains(o, cpuIdle, ilb, t)
		}
		if next > o.nextBalance {
			next = o.nextBalance
			updateNext = true
		}
	}
	if !aborted {
		t += s.class.rebalanceDomains(ilb, cpuIdle, ilb, t)
	}
	if updateNext {
		s.nohzNext = next
	}
	ilb.balanceUntil = t
	s.lb.ilbNS += t - start
}

// llcBusyCPUs is sd_llc_shared->nr_busy_cpus: the CPUs of cpu's LLC that
// are running something (the kernel counts a CPU busy from its first busy
// tick until its tick stops again: close to the same set).
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
