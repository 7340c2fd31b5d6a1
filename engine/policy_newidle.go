package engine

import (
	"fmt"

	"schedplay/engine/knob"
)

// The newly idle pull as a policy's step (issue 29): a CPU about to go
// idle (the fair class's balance hook: v5.2's idle_balance, 6.x's
// newidle_balance) runs the policy instead of the era's own. The policy
// looks at the machine through a BalanceView and names the CPU to pull
// from (or none); the engine then pulls as a newly idle load_balance pass
// would from that CPU.
//
// What it costs the CPU going idle, in the units load_balance's own
// passes are charged in (lbCost): each probe lb_cpu_ns (update_sg_lb_stats
// reading one runqueue), and a pull lb_base_ns (the pass's fixed part:
// the two runqueue locks, detach and attach). kernel.newidle_balance()
// costs what the era's balance costs. The policy's own run time costs
// nothing. The cost ends the pass as the kernel's does (endNewidle): a
// CPU that got a task starts it that much later; one that did not is
// idle only once it is spent.

// NewidlePolicy replaces the era's newly idle balance (HookNewidleBalance).
// NewidleBalance returns the CPU to pull fair tasks from and how many at
// most (n ≥ 1), or src -1: no pull (stay idle, or keep what
// BalanceView.KernelNewidleBalance pulled). An error stops the run after
// this event, as a wake policy's does.
type NewidlePolicy interface {
	NewidleBalance(v *BalanceView) (src, n int, err error)
}

// BalanceView is what a NewidlePolicy sees of one newly idle balance: the
// CPU going idle (View's this CPU: AvgIdle, ThisNrRunning read its
// runqueue for free), the root domain's overload flag, the topology, and
// the runtime state of the CPUs it probes (View.Probe, here lb_cpu_ns
// each). Its slots are the wake hooks' (one store per run). It is valid
// only during the call it is passed to.
type BalanceView struct {
	View
	c       *cpu
	skipLLC bool
	cost    int64 // the policy's probes and reads so far
	probes  int
	// the kernel's pass, when the policy ran it: its cost, and the
	// CPU's balanceUntil before it (endNewidle's is redone with the
	// whole cost)
	kernelRan   bool
	kernelCost  int64
	untilBefore int64
	active      bool
}

func (s *Sim) newBalanceView() *BalanceView {
	w := &s.wview.View
	b := &BalanceView{View: View{s: s, probed: make([]uint32, s.topo.NCPU), cpuSlots: w.cpuSlots, llcSlots: w.llcSlots, rng: w.rng}}
	b.bal = b
	return b
}

// CPU is the CPU going idle (this_rq()).
func (v *BalanceView) CPU() int { return v.this }

// SkipLLC reports whether the shared runqueue (SHARED_RUNQ) has covered
// the LLC already: the kernel's balance then leaves out the levels up to
// it.
func (v *BalanceView) SkipLLC() bool { return v.skipLLC }

// Overloaded is the root domain's overload flag (rd->overload: some CPU
// has a task waiting), which the kernel's newidle balance reads without
// a probe before it balances at all.
func (v *View) Overloaded() bool { return v.s.overloaded }

func (v *BalanceView) probe(cpu int) bool {
	v.probes++
	v.cost += v.s.k.Get(knob.LBCPUNS)
	return v.s.cpus[cpu].idle()
}

// clock is the pass's time so far: the kernel's pass and the policy's
// probes.
func (v *BalanceView) clock() int64 { return v.kernelCost + v.cost }

// KernelNewidleBalance runs the era's own newly idle balance now (its
// gates, levels, pulls, cost and bookkeeping, as without a policy) and
// returns the number of tasks it pulled. A second call does nothing and
// returns 0.
func (v *BalanceView) KernelNewidleBalance() int {
	if v.kernelRan {
		return 0
	}
	c := v.c
	before := c.nr
	v.kernelRan, v.untilBefore = true, c.balanceUntil
	v.kernelCost = v.s.kernelNewidleBalance(c, v.skipLLC)
	return max(c.nr-before, 0)
}

// The runqueue reads a pull policy wants, each of a CPU probed in the call
// (in a wakeup's call too).

// HNrRunning is the CPU's fair nr_running (cfs_rq->h_nr_running without
// task groups: queued and running fair tasks; era 6.12's delayed tasks
// included, as the kernel counts them).
func (v *View) HNrRunning(cpu int) (int, error) {
	c, err := v.readable(cpu)
	if err != nil {
		return 0, err
	}
	return c.nr, nil
}

// NrQueued is the number of fair tasks queued behind the CPU's current
// task (the ones a balance could detach).
func (v *View) NrQueued(cpu int) (int, error) {
	c, err := v.readable(cpu)
	if err != nil {
		return 0, err
	}
	return len(c.tree), nil
}

// Load is the CPU's runqueue load as the era's balancer and wake_affine
// read it (cpu_load(): load_avg; v5.2's runnable_load_avg).
func (v *View) Load(cpu int) (int64, error) {
	c, err := v.readable(cpu)
	if err != nil {
		return 0, err
	}
	return v.s.cpuLoad(c), nil
}

// kernelNewidleBalance is the era's own newidle balance.
func (s *Sim) kernelNewidleBalance(c *cpu, skipLLC bool) int64 {
	if s.fair.balancer == balancer66 {
		return s.newidleBalance66(c, skipLLC)
	}
	return s.idleBalance52(c, skipLLC)
}

// policyNewidle runs the policy where the era's newidle balance would
// run, pulls what it asks for and ends the pass. It returns the CPU time
// the pass took, as newidleBalanceFair does.
func (s *Sim) policyNewidle(c *cpu, skipLLC bool) int64 {
	v := s.bview
	if v.active {
		// A balance inside the policy's own (cannot happen: nothing in
		// a newly idle balance schedules a CPU synchronously).
		return s.kernelNewidleBalance(c, skipLLC)
	}
	v.active, v.c, v.this, v.skipLLC = true, c, c.id, skipLLC
	v.cost, v.probes, v.kernelRan, v.kernelCost = 0, 0, false, 0
	v.nextGen()
	src, n, err := s.niPolicy.NewidleBalance(v)
	v.active = false
	if err == nil && src != -1 {
		switch {
		case src < -1 || src >= s.topo.NCPU:
			err = fmt.Errorf("newidle policy returned CPU %d: the machine has CPUs 0..%d (or -1: no pull)", src, s.topo.NCPU-1)
		case src == c.id:
			err = fmt.Errorf("newidle policy returned CPU %d, the CPU going idle itself", src)
		case n < 1:
			err = fmt.Errorf("newidle policy asked to pull %d tasks from CPU %d; want at least 1", n, src)
		case s.pullLevel(c, src) < 0:
			err = fmt.Errorf("newidle policy returned CPU %d, in none of CPU %d's sched domains", src, c.id)
		}
	}
	if err != nil {
		s.policyError(err)
		src = -1
	}
	cost := v.kernelCost + v.cost
	// The function's epilogue stays the kernel's whatever the policy
	// chose: this_rq->next_balance comes forward to the lowest domain's
	// next balance at most (newidle_balance's update_next_balance(sd)
	// and its out: label, v5.2's idle_balance alike), unless the kernel's
	// own pass ran and did so.
	next := c.nextBalance
	if !v.kernelRan && len(c.domains()) > 0 {
		next = min(next, s.now+Second, s.idleNextBalance(c, 0))
	}
	if src >= 0 {
		cost += s.policyPull(c, src, n, s.now+cost)
	} else if v.cost == 0 {
		// Nothing beyond the kernel's own pass (if it ran: it ended
		// itself), or nothing at all.
		c.nextBalance = next
		return cost
	}
	if v.kernelRan {
		c.balanceUntil = v.untilBefore // endNewidle again, with the whole cost
	}
	return s.endNewidle(c, cost, next)
}

// pullLevel is the lowest level of c's domains whose span holds src (the
// level a load_balance pulling from src would run at), or -1.
func (s *Sim) pullLevel(c *cpu, src int) int {
	for i, d := range c.domains() {
		if d.Span.Test(src) {
			return i
		}
	}
	return -1
}

// policyPull pulls up to n fair tasks from src to the newly idle c, as
// detach_tasks and attach_tasks of a newly idle load_balance pass at the
// lowest level spanning both would, counting the task migrate_task's
// way: it walks src's cfs_tasks from the tail, at most loop_max
// (sched_nr_migrate, src's nr_running) entries, never empties src, and
// moves each task can_migrate_task allows (affinity, not running, cache
// hot as the era's task_hot says, against that level's failed-pass
// count); a task it skips goes to the list's head. The pass counts as a
// balance call, its tasks as moved (Balance), their migrations by
// distance as any. It returns the pass's fixed cost (lb_base_ns).
func (s *Sim) policyPull(c *cpu, srcID, n int, at int64) int64 {
	s.stats.lbCalls++
	cost := s.k.Get(knob.LBBaseNS)
	src := s.cpus[srcID]
	if src.nrRunning() <= 1 {
		return cost
	}
	var env lbEnv
	s.initLBEnv(&env, c, s.pullLevel(c, srcID), cpuNewlyIdle, c, at)
	env.src = src
	env.loopMax = min(int(s.k.Get(knob.SchedNrMigrate)), src.nrRunning())
	cands := s.sortedCands(src)
	detached := s.lb.detached[:0]
	for _, p := range cands {
		if len(detached) >= n || src.nrRunning() <= 1 {
			break
		}
		env.loop++
		if env.loop > env.loopMax {
			break
		}
		if !s.canMigrateTask(p, &env) {
			s.cfsListAdd(p)
			continue
		}
		s.class.detachTask(src, p, c)
		detached = append(detached, p)
	}
	for i := len(detached) - 1; i >= 0; i-- {
		s.class.attachTask(c, detached[i], c)
	}
	s.stats.lbMoved += int64(len(detached))
	clear(cands)
	clear(detached)
	s.lb.cands, s.lb.detached = cands[:0], detached[:0]
	return cost
}
