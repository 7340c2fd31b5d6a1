package engine

import (
	"schedplay/engine/cpuidle"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Idle states as v5.2 chooses and leaves them (kernel/sched/idle.c do_idle
// and cpuidle_idle_call, kernel/time/tick-sched.c, Linux 5.2.1 at
// fc4ec72d). A CPU with nothing to run asks its cpuidle governor (package
// cpuidle) for a state, given the time to its next timer; the governor
// also says whether the tick may stop. The CPU leaves the state when an
// interrupt arrives: a wakeup IPI (or, for a CPU in POLL or MWAIT, which
// waits with TIF_POLLING_NRFLAG set, the waker's store to its need_resched
// flag), the tick if it was kept, a timer of a
// task that slept on it, or the POLL state's own time limit. An interrupt
// that brings no work sends it straight back through the governor, as
// the idle loop does. The time it stayed, including the hardware exit, is
// reported back to the governor, which removes the declared exit latency
// itself (menu_update). A wakeup pays the state's measured exit time, not
// the declared one.

// nohzMaxSleepNS bounds the time to the next timer of an idle CPU that has
// none of the simulated tasks' timers pending: a real idle CPU always has
// some hrtimer armed, at the latest the softlockup watchdog's sample timer
// (watchdog_thresh 10 s → every 2·10/5 = 4 s, kernel/watchdog.c).
const nohzMaxSleepNS = 4 * Second

// initIdle builds the registered idle states and every CPU's governor.
func (s *Sim) initIdle() {
	spec := s.topo.Spec.IdleStates
	n := min(len(spec), int(s.k.Get(knob.MaxCState))+1)
	s.idleStates = make([]cpuidle.State, n)
	s.idleExitNS = make([]int64, n)
	s.idleCoreLevel = make([]bool, n)
	s.idleByStore = make([]bool, n)
	for i := 0; i < n; i++ {
		st := spec[i]
		s.idleStates[i] = cpuidle.State{Name: st.Name, ExitLatencyUS: st.ExitLatencyUS,
			TargetResidencyUS: st.TargetResidencyUS, Polling: st.Polling, Disabled: st.Disabled}
		s.idleExitNS[i] = st.ExitNS()
		s.idleCoreLevel[i] = st.CoreLevel
		s.idleByStore[i] = st.WokenByStore()
	}
	s.shallowIdle = 0
	for i, st := range s.idleStates {
		if !st.Polling && !st.Disabled {
			s.shallowIdle = i
			break
		}
	}
	s.stats.idleEntries = make([]int64, n)
	s.stats.idleResidencyNS = make([]int64, n)
	kind := cpuidle.Kind(s.k.Get(knob.CpuidleGovernor))
	s.noCpuidle = s.topo.Spec.IdleDriver == machine.IdleDriverNone
	if s.noCpuidle {
		kind = cpuidle.KindNone
	}
	for _, c := range s.cpus {
		c.gov = cpuidle.New(kind, s.rules.menu, nohzMaxSleepNS/Microsecond)
		c.lastAcct = 0
		// At t=0 every CPU is idle, as on a machine that has been up
		// for a while with nothing to do.
		c.idleSince = 0
		s.selectIdleState(c, false)
	}
}

// idleModel reports whether idle states are simulated at all.
func (s *Sim) idleModel() bool { return s.k.On(knob.IDLE_STATES) }

// selectIdleState is cpuidle_idle_call for idle CPU c: choose a state,
// stop or keep the tick, and arm what will interrupt the state (the kept
// tick, or POLL's time limit).
func (s *Sim) selectIdleState(c *cpu, tickStopped bool) {
	if !s.rules.cpuidle {
		s.defaultIdle(c)
		return
	}
	c.stateEntered = s.now
	c.pollLimitAt = 0
	c.reflected = false
	if !s.idleModel() {
		c.cstate, c.tickStopped = 0, true
		s.nohzEnterIdle(c)
		return
	}
	nextTick := (s.now/s.tickNS + 1) * s.tickNS
	timer := min(s.nextTimer(c), s.now+nohzMaxSleepNS)
	sleep := timer - s.now
	deltaNext := sleep
	if !tickStopped {
		deltaNext = min(sleep, nextTick-s.now)
	}
	if sleep <= s.tickNS {
		// tick_nohz_next_event: a timer within the next tick means the
		// tick cannot stop; the governor is told the time to the next
		// event including the tick.
		sleep = deltaNext
	}
	in := cpuidle.Input{SleepLengthNS: sleep, DeltaNextNS: deltaNext, TickStopped: tickStopped,
		LatencyReqUS: s.cpuLatencyReqUS(), TickUS: s.tickNS / Microsecond}
	idx, stop := c.gov.Select(s.idleStates, in)
	c.cstate = idx
	c.tickStopped = tickStopped || stop
	if c.tickStopped && !tickStopped {
		// tick_nohz_idle_stop_tick: the tick stops in this idle period.
		s.nohzEnterIdle(c)
	}
	s.stats.idleEntries[idx]++
	wake := farFuture
	if !c.tickStopped {
		wake = nextTick
	}
	if s.idleStates[idx].Polling && !s.noCpuidle && s.k.Get(knob.CpuidleGovernor) != knob.GovernorNone {
		// poll_idle gives up after the next state's target residency
		// (a tick when there is none) and lets the governor choose again.
		c.pollLimitAt = s.now + cpuidle.PollLimitNS(s.idleStates, idx, s.tickNS)
		wake = min(wake, c.pollLimitAt)
	}
	slot := s.topo.NCPU + c.id
	switch {
	case wake == nextTick:
		s.q.scheduleTick(slot, wake)
	case wake < farFuture:
		s.q.schedule(slot, wake)
	default:
		s.q.cancel(slot)
	}
}

// reflectIdle reports the idle period begun at c.stateEntered to the
// governor (cpuidle_reflect), once per selection. exit is the part of the
// period still to come: the state's exit when an interrupt has just
// arrived, 0 when the CPU is already running again.
func (s *Sim) reflectIdle(c *cpu, exit int64, gotTick, pollLimit bool) {
	if !s.idleModel() || c.reflected {
		return
	}
	c.reflected = true
	s.stats.idleResidencyNS[c.cstate] += s.now - c.stateEntered
	c.gov.Reflect(c.cstate, cpuidle.Outcome{ResidencyNS: s.now - c.stateEntered + exit, GotTick: gotTick, PollTimeLimit: pollLimit})
}

// onIdleInterrupt handles the tick slot of an idle CPU: its kept tick or
// the POLL time limit. Neither brings work by itself (the tick may, via
// the periodic balance of an idle CPU), so the idle loop chooses again.
func (s *Sim) onIdleInterrupt(c *cpu) {
	gotTick := !c.tickStopped && s.now%s.tickNS == 0
	pollLimit := c.pollLimitAt != 0 && s.now >= c.pollLimitAt
	if !gotTick && !pollLimit {
		return // a stale wake-up: the CPU chose again since
	}
	s.reflectIdle(c, s.exitLatency(c), gotTick, pollLimit)
	if gotTick {
		// The tick is an hrtimer interrupt: sleep timers past their
		// soft expiry fire with it.
		s.inTimerIRQ = true
		s.expireTimers(c)
		s.inTimerIRQ = false
		s.idleTick(c)
		if c.curr != nil || c.nr > 0 || c.wakePending > 0 {
			return // the idle balance found work: the CPU has left idle
		}
	}
	s.selectIdleState(c, c.tickStopped)
}

// idleTick is scheduler_tick on an idle CPU whose tick the governor kept:
// trigger_load_balance runs the periodic balance as CPU_IDLE when it is
// due (an idle CPU never kicks the NOHZ balancer itself).
func (s *Sim) idleTick(c *cpu) {
	s.class.taskTickIdle(c)
	if s.k.On(knob.LB_PERIODIC) && s.now >= c.nextBalance {
		// Its own CPU time: a task that arrives meanwhile waits for it.
		cost := s.class.rebalanceDomains(c, cpuIdle, c, s.now)
		c.balanceUntil = max(c.balanceUntil, s.now+cost)
	}
}

// nextTimer is the earliest pending timer of a task that slept on c, or
// farFuture.
func (s *Sim) nextTimer(c *cpu) int64 {
	t := farFuture
	for _, id := range c.timers {
		t = min(t, s.q.whenOf(s.taskSlot(s.tasks[id])))
	}
	return t
}

// armTimer records that task t's sleep timer lives on c (hrtimers are
// queued on the CPU that armed them).
func (s *Sim) armTimer(c *cpu, t *Task) {
	t.timerCPU = c.id
	c.timers = append(c.timers, t.ID)
}

// disarmTimer forgets t's timer on its CPU.
func (s *Sim) disarmTimer(t *Task) {
	if t.timerCPU < 0 {
		return
	}
	c := s.cpus[t.timerCPU]
	for i, id := range c.timers {
		if id == t.ID {
			c.timers[i] = c.timers[len(c.timers)-1]
			c.timers = c.timers[:len(c.timers)-1]
			break
		}
	}
	t.timerCPU = -1
}

// polling reports whether idle CPU c spins in the POLL state (what the
// occupancy map draws as polling; wokenByStore also covers MWAIT).
func (s *Sim) polling(c *cpu) bool {
	return c.curr == nil && s.idleModel() && s.idleStates[c.cstate].Polling
}

// wokenByStore reports whether idle CPU c waits with TIF_POLLING_NRFLAG
// set (POLL, or MWAIT on its thread flags): a waker's set_nr_and_not_polling
// (kernel/sched/core.c) then only stores need_resched, sends no IPI, and
// the store to the monitored line ends the wait.
func (s *Sim) wokenByStore(c *cpu) bool {
	return c.curr == nil && s.idleModel() && s.idleByStore[c.cstate]
}

// exitLatency is the measured time it takes idle CPU c to leave its state.
// A core-level state (C3/C6, AMD CC6, POWER9 stop0 and deeper) is the
// core's, and the core is only as deep as its shallowest thread: the core
// C-state is the minimum of its threads' requested states (Intel SDM vol.
// 3B, "Core C-states": a core enters the shallowest state its threads ask for).
// While a sibling runs or polls, the core stays in C0 and the thread pays
// the shallowest physical state's exit; while every sibling is idle, the
// exit is that of the shallowest state any thread of the core is in.
func (s *Sim) exitLatency(c *cpu) int64 {
	if !s.idleModel() || c.curr != nil {
		return 0
	}
	i := c.cstate
	if !s.idleCoreLevel[i] {
		return s.idleExitNS[i]
	}
	exit := s.idleExitNS[i]
	for _, id := range s.topo.CoreCPUs[c.core] {
		if id == c.id {
			continue
		}
		o := s.cpus[id]
		if o.curr != nil || s.idleStates[o.cstate].Polling {
			return s.idleExitNS[s.shallowIdle]
		}
		if !s.idleCoreLevel[o.cstate] {
			exit = min(exit, s.idleExitNS[o.cstate])
		}
	}
	return exit
}

// declaredExitUS is the exit latency the driver declares for c's state
// (idle_get_state(rq)->exit_latency, what find_idlest_group_cpu compares).
func (s *Sim) declaredExitUS(c *cpu) int64 {
	if !s.idleModel() || c.curr != nil {
		return 0
	}
	return s.idleStates[c.cstate].ExitLatencyUS
}

// idleWakeDelay is how long after a waker's action idle CPU c starts
// running the scheduler: the IPI's delivery plus the state's exit, or for
// a CPU woken by the store (POLL, MWAIT) the time its need_resched line
// takes to move from the waker (from) to it plus the state's exit (0 for
// POLL).
func (s *Sim) idleWakeDelay(c *cpu, from int) int64 {
	if s.wokenByStore(c) {
		return s.lineXfer(from, c.id) + s.exitLatency(c)
	}
	return s.k.Get(knob.IPINS) + s.exitLatency(c)
}

// IdleState returns the idle-state index CPU id is in (meaningful when
// idle), counting from the preset's first state.
func (s *Sim) IdleState(id int) int { return s.cpus[id].cstate }

// IdleStateNames lists the registered idle states, shallowest first.
func (s *Sim) IdleStateNames() []string {
	n := make([]string, len(s.idleStates))
	for i, st := range s.idleStates {
		n[i] = st.Name
	}
	return n
}

// cpuLatencyReqUS is cpu_latency_qos_limit(): the smallest of the
// pm_qos_latency_us knob and the workloads' requests (RequestCPULatency).
func (s *Sim) cpuLatencyReqUS() int64 {
	req := s.k.Get(knob.PMQoSLatencyUS)
	if s.qosReqUS >= 0 {
		req = min(req, s.qosReqUS)
	}
	return req
}

// RequestCPULatency is a workload holding /dev/cpu_dma_latency open with
// us written to it (cpu_latency_qos_add_request), as cyclictest does for
// its whole run: no CPU enters an idle state whose exit latency is above
// it. The smallest request holds.
func (s *Sim) RequestCPULatency(us int64) {
	if us < 0 {
		return
	}
	if s.qosReqUS < 0 || us < s.qosReqUS {
		s.qosReqUS = us
	}
}
