package engine

import (
	"fmt"
	"math/rand/v2"

	"schedplay/engine/cpuidle"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// cpu is one logical CPU: its CFS runqueue, what it is running, its idle
// state and its per-CPU scheduling-domain state.
type cpu struct {
	s    *Sim
	id   int
	core int

	// RT runqueue (rt.go), nil in a run without RT tasks; rtNr is
	// what it adds to rq->nr_running (0 while throttled).
	rt   *rtRQ
	rtNr int
	// Deadline runqueue (dl.go), nil in a run without deadline tasks;
	// dlNr is what it adds to rq->nr_running (its tree: a throttled
	// task is off it).
	dl   *dlRQ
	dlNr int
	// fairServer is the CPU's fair server (rq->fair_server, era 6.12;
	// dlserver.go), nil without one.
	fairServer *dlEntity
	fsIdleMark int64 // the idle time charged to it so far (the idle task's exec_start)
	// distPrev is the CPU's distribute_cpu_mask_prev
	// (cpumask_any_and_distribute, lib/cpumask.c), which find_lowest_rq
	// and find_later_rq share.
	distPrev int

	// CFS runqueue: queued tasks (not curr), ordered by vruntime.
	tree []*Task
	curr *Task
	nr   int // nr_running: queued + curr
	// nrDelayed counts the queued tasks that are delayed (era 6.12's
	// sched_delayed; 0 in the other eras): nr includes them, as
	// rq->nr_running does, and cfs_h_nr_delayed() is this count.
	nrDelayed   int
	loadWeight  int64 // Σ weight of queued + curr
	minVruntime int64
	nextBuddy   *Task
	lastBuddy   *Task
	skipBuddy   *Task // cfs_rq->skip: the task that yielded (CFS eras; yield.go)
	needResched bool
	// EEVDF (era 6.6): Σ (v_i - min_vruntime)·w_i and Σ w_i over the
	// tree (cfs_rq->avg_vruntime, avg_load).
	avgVruntime int64
	avgLoad     int64

	// Progress of curr's current phase.
	segStart int64
	rate     int64 // work per ns ×1024 (SMT-dependent)

	// Idle state (idle.go).
	idleSince    int64 // when the CPU last switched to the idle task
	gov          cpuidle.Governor
	cstate       int   // registered idle state chosen at the last selection
	stateEntered int64 // when that selection was made
	tickStopped  bool  // NOHZ: the tick is stopped for this idle period
	// nohzIdle is rq->nohz_tick_stopped, the CPU's bit in
	// nohz.idle_cpus_mask: set when an idle period stops the tick, cleared
	// only at the CPU's first busy tick (balance_idle.go).
	nohzIdle    bool
	pollLimitAt int64 // POLL's time limit, 0 when not polling
	reflected   bool  // the governor has been told how the period ended
	idleTask    *Task // stands in for `current` when the CPU is idle
	timers      []TaskID

	// The wakeup race (ttwu): wakeups decided for this CPU and not yet
	// enqueued — a same-LLC waker between its decision and the enqueue
	// under this rq's lock, or tasks on the TTWU_QUEUE wake_list waiting
	// for scheduler_ipi. idle_cpu() is false while there are any.
	wakePending int
	wakeList    []*Task
	// rqLine is the state of the runqueue cache lines the idle search
	// reads (rq->curr, nr_running, wake_list): see line.go.
	rqLine line

	// rq fields of the wakeup path (kernel-reference.md §1.5).
	idleStamp          int64 // set when going newly idle, 0 otherwise
	avgIdle            int64
	maxIdleBalanceCost int64
	avgScanCost        int64 // this CPU's sd_llc->avg_scan_cost
	// v6.6 SIS_PROP's budget (era 6.6): rq->wake_avg_idle and the jiffy
	// it was last aged at (rq->wake_stamp).
	wakeAvgIdle int64
	wakeStamp   int64

	// PELT sums.
	runnableLoad signal // Σ runnable tasks' load (cfs runnable_load_avg)
	// loadAvg is cfs_rq->avg.load_avg: the load of every task attached to
	// this CPU, runnable or blocked. A sleeping task's decaying load stays
	// here until it wakes elsewhere or exits; fork placement reads it.
	loadAvg signal
	util    signal // CPU busy ×1024
	// runnableAvg is cfs_rq->avg.runnable_avg (era 6.6 only): the PELT
	// average of the runnable-task count ×1024, attached tasks' decaying
	// share included, like loadAvg.
	runnableAvg signal
	// avgRT and avgDL are rq->avg_rt and rq->avg_dl util_avg: running
	// signals of the RT and deadline classes (rtcap.go), kept only in a
	// run with those classes; capacity is rq->cpu_capacity (capacity_of),
	// 1024 in a run without them.
	avgRT, avgDL signal
	capacity     int64

	// Load balancing.
	nextBalance int64
	doms        []domState
	pushTo      int   // active balance: push curr to this CPU at the next switch, or -1
	pushLB      bool  // era 6.6: pushTo was set by load_balance (the stopper resets nr_balance_failed)
	smtHeld     bool  // SMT_NICE holds queued work back: idle, re-checking each tick
	o1          *o1RQ // era 2.6-o1: the priority arrays (o1.go), nil in other eras
	// pendingOverhead is CPU time an idle CPU owes (e.g. shared-runqueue
	// lock work); the next task it switches to pays it first.
	pendingOverhead int64
	// balanceUntil: an idle CPU still busy balancing (an unsuccessful
	// newidle pass, or the NOHZ idle balance it runs as the kicked ILB)
	// until then; a task it switches to earlier waits for the rest.
	balanceUntil int64
	// lastMM is the address space loaded on the CPU (kept while idle).
	lastMM int
	// polluted is the cache refill the next non-polluting task to run on
	// this CPU owes because a cache burner ran here last.
	polluted int64

	// niRand is the CPU's sched_rng (era 6.12's NI_RANDOM), nil elsewhere.
	niRand *rand.Rand

	// Accounting.
	busyNS, idleNS int64
	lastAcct       int64
}

type domState struct {
	lastBalance       int64
	nextDecay         int64
	balanceIntervalMS int64
	nrBalanceFailed   int
	maxNewidleLBCost  int64
	// localIdx is the index of the CPU's own group in the level's groups.
	localIdx int
	// niCall, niSuccess and niRatio are 6.12's sd->newidle_call,
	// newidle_success and newidle_ratio (NI_RANDOM; sd_init starts them
	// at 512, 256, 512).
	niCall, niSuccess, niRatio int64
	// ivMS is the balanceIntervalMS that ivIdle and ivBusy, the idle and
	// busy get_sd_balance_interval, were computed for (0: none yet).
	ivMS, ivIdle, ivBusy int64
}

func newCPU(s *Sim, id int) *cpu {
	mig := s.k.Get(knob.SchedMigrationCost)
	c := &cpu{
		s: s, id: id, core: s.topo.Core[id],
		pushTo:             -1,
		capacity:           1024,
		rqLine:             line{owner: int32(id)},
		avgIdle:            2 * mig,
		wakeAvgIdle:        2 * mig,
		maxIdleBalanceCost: mig,
		idleTask:           &Task{ID: -1, Name: fmt.Sprintf("swapper/%d", id), lastWakee: -1, recentUsedCPU: -1},
		// Room for a few sleepers' timers before the list has to grow.
		timers: make([]TaskID, 0, 4),
	}
	if s.fair.newidleRandom {
		c.niRand = rand.New(rand.NewPCG(s.seed, 0x6e69<<32|uint64(id)))
	}
	for _, d := range s.topo.Domains[id] {
		// The machine has been up long before the run starts: on an
		// idle box no CPU has balanced for ages, so every level is due
		// at its first chance (not one interval after "boot").
		c.doms = append(c.doms, domState{balanceIntervalMS: d.MinIntervalMS, lastBalance: -3600 * Second, localIdx: groupIndex(d, id),
			niCall: 512, niSuccess: 256, niRatio: 512})
	}
	return c
}

func (c *cpu) domains() []*machine.Domain { return c.s.topo.Domains[c.id] }

// busy reports whether the CPU is running a task.
func (c *cpu) busy() bool { return c.curr != nil }

// idle is the kernel's available_idle_cpu (idle_cpu): nothing running,
// nothing queued, and no wakeup on its way (a waker holding its rq lock,
// or a task on its wake_list).
func (c *cpu) idle() bool {
	return c.curr == nil && c.nr == 0 && c.rtNr == 0 && c.dlNr == 0 && c.wakePending == 0
}

// waiting reports whether c has a runnable task that is not running: a
// fair one (delayed tasks, 6.12, sleep) or an RT or deadline one behind
// curr.
func (c *cpu) waiting() bool {
	if len(c.tree) > c.nrDelayed {
		return true
	}
	n := c.rtNr + c.dlNr
	if n == 0 {
		return false
	}
	if t := c.curr; t != nil && (t.rt() || t.dl() && t.dlse.onRQ) {
		n-- // curr stays on its array or tree while it runs
	}
	return n > 0
}

// nrRunning is rq->nr_running: the fair tasks (cpu.nr), the RT tasks of
// an RT runqueue that is not throttled and the deadline tasks that are
// not.
func (c *cpu) nrRunning() int { return c.nr + c.rtNr + c.dlNr }

// empty reports whether the CPU has nothing running and nothing queued
// (the work-conservation meter's "idle": a wakeup on its way does not
// count until it is enqueued).
func (c *cpu) empty() bool { return c.curr == nil && c.nr == 0 && c.rtNr == 0 && c.dlNr == 0 }

// account moves time since the last accounting into busy or idle.
func (c *cpu) account(now int64) {
	d := now - c.lastAcct
	if d <= 0 {
		return
	}
	if c.curr != nil {
		c.busyNS += d
	} else {
		c.idleNS += d
	}
	c.lastAcct = now
}

// ---- progress of the current phase ----

// phaseIsWork reports whether curr's current phase consumes work (switch,
// Run, wake cost) rather than wall time (Spin).
func phaseWork(t *Task) *int64 {
	if t.switchLeft > 0 {
		return &t.switchLeft
	}
	if t.actActive && (t.act.Kind == ActRun || t.act.Kind == ActWake) {
		return &t.burnLeft
	}
	return nil
}

// settle credits curr with the work done since segStart at the current rate.
// Most calls find nothing to credit (settled already at this instant):
// that test inlines, the crediting does not.
func (s *Sim) settle(c *cpu) {
	if c.curr != nil && s.now > c.segStart {
		s.settleSegment(c)
	}
}

// settleSegment is settle's crediting, kept out of line (noinline: the
// inliner would fold it back into settle, which then no longer inlines).
//
//go:noinline
func (s *Sim) settleSegment(c *cpu) {
	if w := phaseWork(c.curr); w != nil {
		done := (s.now - c.segStart) * c.rate / 1024
		*w = max(0, *w-done)
	}
	c.segStart = s.now
}

// armPhase schedules the end of curr's current phase.
func (s *Sim) armPhase(c *cpu) {
	t := c.curr
	start := max(s.now, c.segStart)
	var end int64
	if w := phaseWork(t); w != nil {
		if *w >= farFuture/1024 {
			end = farFuture // an endless burn (a hog): never completes
		} else {
			end = start + (*w*1024+c.rate-1)/c.rate
		}
	} else if t.actActive && t.act.Kind == ActSpin {
		end = max(start, t.spinUntil)
	} else {
		end = start
	}
	s.q.schedule(c.id, end)
}

// userPhase reports whether curr is in preemptible user code.
func userPhase(t *Task) bool {
	if t.switchLeft > 0 || !t.actActive {
		return false
	}
	switch t.act.Kind {
	case ActRun:
		return !t.act.Kernel
	case ActSpin:
		return true
	}
	return false
}

// smtRate computes the speed (×1024) of the task on c given what its SMT
// siblings run: a core with k busy threads delivers smt_throughput[k] in
// total; a thread's share is reduced by its co-runners' SMT pressure.
func (s *Sim) smtRate(c *cpu) int64 {
	cpus := s.topo.CoreCPUs[c.core]
	if len(cpus) == 1 {
		return 1024
	}
	k := int64(0)
	pressure := int64(0)
	for _, id := range cpus {
		o := s.cpus[id]
		if o.curr == nil {
			continue
		}
		k++
		if id != c.id {
			pressure += o.curr.smtPressure
		}
	}
	if k <= 1 {
		return 1024
	}
	share := s.topo.SMTThroughput1024[k] / k // nominal per-thread speed
	avgPressure := pressure / (k - 1)
	r := 1024 - (1024-share)*avgPressure/1024
	return min(1024, max(64, r))
}

// coreChanged refreshes the speed of every busy thread of c's core after a
// thread started or stopped running or switched task.
func (s *Sim) coreChanged(c *cpu) {
	for _, id := range s.topo.CoreCPUs[c.core] {
		o := s.cpus[id]
		if o.curr == nil {
			continue
		}
		s.settle(o)
		r := s.smtRate(o)
		if r != o.rate {
			o.rate = r
			s.armPhase(o)
		}
	}
}

// ---- running tasks ----

const maxZeroTimeSteps = 100000

// farFuture is a time no simulation reaches (about 146 years).
const farFuture = int64(1) << 62

// continueTask drives curr through its program until it starts a phase that
// takes time, blocks, exits or is preempted.
func (s *Sim) continueTask(c *cpu) {
	t := c.curr
	for steps := 0; ; steps++ {
		if steps > maxZeroTimeSteps {
			panic(fmt.Sprintf("engine: task %q made %d zero-time steps; its program never burns time", t.Name, steps))
		}
		if t.switchLeft > 0 {
			s.armPhase(c)
			return
		}
		if t.wokenAt >= 0 {
			s.recordWakeLatency(t)
		}
		if t.actActive {
			switch t.act.Kind {
			case ActRun:
				if t.burnLeft > 0 {
					if c.needResched && !t.act.Kernel {
						s.schedule(c)
						return
					}
					s.armPhase(c)
					return
				}
			case ActSpin:
				if s.now < t.spinUntil {
					if c.needResched {
						s.schedule(c)
						return
					}
					s.armPhase(c)
					return
				}
			case ActWake:
				if t.burnLeft > 0 {
					s.armPhase(c)
					return
				}
				if !t.wakeQueued {
					// Second part: ttwu_queue (enqueue or wake_list, IPI).
					t.wakeQueued = true
					t.burnLeft = s.finishWake(c, t)
					if t.burnLeft > 0 {
						s.armPhase(c)
						return
					}
				}
			}
			t.actActive = false
		}
		// Between actions: a preemption point, unless the action just
		// completed continues a kernel section.
		if c.needResched && !(t.act.Chain && t.act.Kind != ActSpin) {
			s.schedule(c)
			return
		}
		s.ctx.task = t
		if t.progInto != nil {
			t.progInto.NextInto(&s.ctx, &t.act)
		} else {
			t.act = t.prog.Next(&s.ctx)
		}
		if !s.startAction(c, t) {
			return // blocked, slept or exited: c has rescheduled
		}
	}
}

// startAction begins t.act, the action t's program just returned. It
// returns false when the task left the CPU.
func (s *Sim) startAction(c *cpu, t *Task) bool {
	a := &t.act
	kind, hasStamp := a.Kind, a.HasStamp
	switch kind {
	case ActRun:
		t.actActive = true
		t.burnLeft = max(0, a.NS)
		if !a.Kernel {
			t.burnLeft += t.penaltyLeft
			t.penaltyLeft = 0
		}
	case ActSpin:
		t.actActive = true
		t.spinUntil = s.now + max(0, a.NS)
	case ActSleep:
		// hrtimer_nanosleep arms a range timer: soft expiry at the
		// requested time, hard expiry timer_slack_ns later, or at once
		// for an RT or deadline task (hrtimer_nanosleep: "if (dl_task(current) ||
		// rt_task(current)) slack = 0", v5.2 and 6.12). The clock
		// event is programmed for the hard expiry; a timer interrupt on
		// this CPU between the two fires it early (expireTimers).
		t.sleepTimer = true
		t.softExpiry = s.now + max(0, a.NS)
		slack := s.k.Get(knob.TimerSlackNS)
		if t.rtPolicy() || t.dl() {
			slack = 0
		}
		s.q.schedule(s.taskSlot(t), t.softExpiry+slack)
		s.armTimer(c, t)
		s.blockCurr(c, t)
		return false
	case ActBlock:
		s.blockCurr(c, t)
		return false
	case ActWake:
		if int(a.Target) < 0 || int(a.Target) >= len(s.tasks) {
			panic(fmt.Sprintf("engine: task %q wakes unknown task %d", t.Name, a.Target))
		}
		p := s.tasks[a.Target]
		if p.state != TaskBlocked || p.waking || p.sleepTimer {
			// Not waiting (running, or asleep on a timer rather than
			// blocked), or another waker got there first: like a
			// FUTEX_WAKE with no waiter, nothing happens. Programs keep
			// their own futex words to avoid lost wakeups.
			return true
		}
		if p.delayed {
			// 6.12: p is still queued (delayed dequeue), so
			// try_to_wake_up's on_rq test takes ttwu_runnable before
			// select_task_rq: requeued where it is, at once.
			if !hasStamp {
				t.act.Stamp = s.now
			}
			t.actActive = true
			t.wakeQueued = true
			t.burnLeft = s.ttwuRunnable(p, c.id, t, a.Sync, t.act.Stamp, 0)
			return true
		}
		p.waking = true // TASK_WAKING: claimed by this waker
		d := s.class.selectTaskRq(p, c.id, t, a.Sync)
		t.wakeTarget = d.Chosen
		// The choice is not a claim: idle_cpu() (v5.2 kernel/sched/core.c)
		// reads rq->curr, nr_running and the wake_list, and none of them
		// changes until this waker reaches ttwu_queue after paying for
		// the rest of try_to_wake_up (finishWake). Until then another
		// waker's search still sees the CPU idle and may choose it too.
		t.wakeOnIdle = s.cpus[d.Chosen].idle()
		t.actActive = true
		t.wakeQueued = false
		// First part: try_to_wake_up up to ttwu_queue, with the search.
		t.burnLeft = s.k.Get(knob.WakeNS) + d.Cost
		if !hasStamp {
			t.act.Stamp = -1
		}
	case ActExit:
		s.exitCurr(c, t)
		return false
	case ActYield:
		s.yieldCurr(c, t)
		return false
	default:
		panic(fmt.Sprintf("engine: task %q returned unknown action kind %d", t.Name, kind))
	}
	return true
}

// finishWake runs ttwu_queue for the wakee chosen when the wake started,
// now that the waker has paid for the decision; it returns the waker's
// cost of this second part. Only now does the target stop looking idle:
// ttwu_queue → ttwu_do_activate raises nr_running under its rq lock (same
// LLC), or ttwu_queue_remote's llist_add fills its wake_list (v5.2
// kernel/sched/core.c; 6.x: ttwu_queue_wakelist sets rq->ttwu_pending,
// which idle_cpu() also reads). A target some other wakeup, pull or task
// took in the window since the decision gets the wakee anyway: it stacks.
func (s *Sim) finishWake(c *cpu, t *Task) int64 {
	p := s.tasks[t.act.Target]
	stamp := t.act.Stamp
	if stamp < 0 {
		stamp = s.now
	}
	s.o1Wake.sync = t.act.Sync
	target := s.cpus[t.wakeTarget]
	if t.wakeOnIdle && !target.idle() {
		s.stats.stackedWakeups++
	}
	s.claimWake(target)
	cost := s.ttwuQueue(p, target, c.id, stamp, 0)
	s.o1Wake.sync = false
	return cost
}

// blockCurr dequeues curr because it sleeps.
func (s *Sim) blockCurr(c *cpu, t *Task) {
	t.actActive = false
	s.dequeueCurr(c, t, TaskBlocked)
	s.schedule(c)
}

// exitCurr removes curr for good.
func (s *Sim) exitCurr(c *cpu, t *Task) {
	t.actActive = false
	s.dequeueCurr(c, t, TaskExited)
	s.q.cancel(s.taskSlot(t))
	s.schedule(c)
}

// schedule is __schedule(): put curr back if it is still runnable, pick the
// next task (balancing first if the CPU would go idle) and switch to it.
func (s *Sim) schedule(c *cpu) {
	prev := c.curr
	if prev != nil {
		s.class.putPrevTask(prev)
	}
	if prev != nil {
		s.settle(c)
		s.updateCurr(c)
		s.account(c)
		if prev.polluteNS > 0 {
			s.pollute(c, prev)
		}
		c.curr = nil
		s.updateConservation(c)
		if prev.state == TaskRunning {
			prev.state = TaskRunnable
			if c.pushTo >= 0 && prev.allowed.Test(c.pushTo) {
				s.class.pushCurr(c, prev, s.cpus[c.pushTo])
			} else {
				s.class.enqueueEntity(c, prev)
				if s.k.Get(knob.SHARED_RUNQ) == knob.SharedRunqAll {
					s.srqPush(prev, c)
				}
			}
		} else if prev.delayed {
			s.putPrevDelayed(c, prev) // 6.12: asleep, still on_rq
		}
		c.pushTo = -1
		c.pushLB = false
	}
	c.needResched = false
	next := s.class.pickNextTask(c)
	if next != nil && s.smtPresent && s.k.On(knob.SMT_NICE) && s.dependentSleeper(c, next) {
		s.holdIdle(c, prev)
		return
	}
	overhead := int64(0)
	if next == nil {
		c.idleStamp = s.now
		if s.srqOn() && s.srqPop(c) != nil { // v3 pulls whatever rd->overload says (SRQ_OVERLOAD adds the gate)
			next = s.class.pickNextTask(c)
			c.idleStamp = 0
		}
		if next == nil && s.k.On(knob.LB_NEWIDLE) {
			overhead = s.class.balanceNewidle(c, s.srqOn())
			next = s.class.pickNextTask(c)
		}
	}
	if next == nil {
		s.switchToIdle(c, prev)
		c.smtHeld = false
		c.pendingOverhead = 0 // paid out of idle time
		if s.smtPresent && s.k.On(knob.SMT_NICE) {
			s.wakeSleepingDependent(c)
		}
		return
	}
	s.class.dequeueEntity(c, next)
	s.srqRemove(next, c)
	if prev == nil {
		s.leaveIdle(c)
		if c.fairServer != nil {
			s.dlServerIdleTime(c) // put_prev_task_idle
		}
	}
	s.setCurr(c, next)
	if next != prev {
		next.switchLeft += s.k.Get(knob.CtxSwitchNS)
		if next.mm != 0 && next.mm != c.lastMM { // a kthread (mm 0) borrows the loaded mm: lazy TLB
			next.switchLeft += s.k.Get(knob.MMSwitchNS)
			c.lastMM = next.mm
		}
		s.stats.ctxSwitches++
		if s.hooks.OnSwitch != nil {
			s.hooks.OnSwitch(c.id, prev, next)
		}
	}
	next.switchLeft += overhead + c.pendingOverhead + s.takeBalanceLeft(c)
	c.pendingOverhead = 0
	c.segStart = s.now
	c.rate = s.smtRate(c)
	s.coreChanged(c)
	s.class.balanceCallback(c, next)
	s.continueTask(c)
}

// pollute records that cache burner t has just stopped running on c: it
// evicted up to what it had time to touch (its run time), capped at its
// working set's refill cost. The next other task on c pays that; tasks now
// running on c's SMT siblings (which share its caches) pay it at once.
func (s *Sim) pollute(c *cpu, t *Task) {
	p := min(t.polluteNS, t.sumExec-t.prevSumExec)
	if p <= 0 {
		return
	}
	c.polluted = max(c.polluted, p)
	for _, id := range s.topo.CoreCPUs[c.core] {
		o := s.cpus[id]
		if id == c.id || o.curr == nil || o.curr.polluteNS > 0 {
			continue
		}
		s.settle(o)
		if ot := o.curr; ot.actActive && ot.act.Kind == ActRun && !ot.act.Kernel && ot.switchLeft == 0 {
			ot.burnLeft += p
			s.armPhase(o)
		} else {
			ot.penaltyLeft += p
		}
	}
}

// switchToIdle is the switch from prev (nil: already idle) to the idle
// task.
func (s *Sim) switchToIdle(c *cpu, prev *Task) {
	s.q.cancel(c.id)
	if prev == nil {
		return
	}
	s.writeLine(c.id, c, s.now) // rq->curr = rq->idle
	s.enterIdle(c)
	s.coreChanged(c)
	if s.hooks.OnSwitch != nil {
		s.hooks.OnSwitch(c.id, prev, nil)
	}
}

// holdIdle idles c although it has queued work (SMT_NICE), keeping a tick
// to re-check.
func (s *Sim) holdIdle(c *cpu, prev *Task) {
	s.switchToIdle(c, prev)
	c.smtHeld = true
	s.q.scheduleTick(s.topo.NCPU+c.id, (s.now/s.tickNS+1)*s.tickNS)
}

// pushCurrQueued is the active-balance stopper of v5.2 and 2.6: the task c
// just stopped running moves to dst.
func (s *Sim) pushCurrQueued(c *cpu, t *Task, dst *cpu) {
	s.accountDequeue(c, t)
	t.vruntime -= c.minVruntime
	s.attachQueued(dst, t, c)
	if c.pushLB {
		// The v5.5+ balancer asked for this push (balance66.go).
		s.activePushed(c, dst)
	}
	s.wakeForPulled(dst, t)
}

// setCurr makes t the running task of c (set_next_entity).
func (s *Sim) setCurr(c *cpu, t *Task) {
	s.class.setNextTask(t)
	s.writeLine(c.id, c, s.now) // rq->curr
	c.curr = t
	defer s.updateConservation(c)
	t.state = TaskRunning
	t.execStart = s.now
	s.cfsListAdd(t)
	t.prevSumExec = t.sumExec
	t.pickDeadline = t.deadline
	t.util.set(s.now, 1024)
	if s.rt == nil && s.dl == nil {
		c.util.set(s.now, 1024)
	} else {
		s.setClassSignals(c, t)
	}
	s.clearBuddies(c, t)
	if t.polluteNS == 0 && c.polluted > 0 {
		t.penaltyLeft += c.polluted
	}
	c.polluted = 0
	if t.lastRanCPU >= 0 && t.lastRanCPU != c.id {
		d := s.topo.Distance(t.lastRanCPU, c.id)
		s.stats.migrations[d]++
		t.migrations++
		p := s.migrationPenalty(t, d)
		s.stats.refillNS[d] += p
		t.penaltyLeft += p
	}
	t.lastRanCPU = c.id
	if t.memNode < 0 && t.memPolicy == MemFirstTouch {
		t.memNode = s.topo.Socket[c.id]
	}
}

func (s *Sim) migrationPenalty(t *Task, d machine.Distance) int64 {
	var override knob.ID
	switch d {
	case machine.SameCore:
		override = knob.MigrateSMTNS
	case machine.SameLLC:
		override = knob.MigrateLLCNS
	case machine.SameSocket:
		override = knob.MigrateCrossLLCNS
	case machine.CrossSocket:
		override = knob.MigrateCrossSocketNS
	default:
		return 0
	}
	if v := s.k.Get(override); v >= 0 {
		return v
	}
	return s.refillNS(t.wssKB, d)
}

// refillMLP is how many of a migrated task's cache misses overlap while it
// refills its working set: out-of-order cores keep ~10-12 L1D misses in
// flight (line fill buffers / miss address buffers) for independent
// accesses, but the pointer walks of kernel and runtime data serialise;
// 4 is a middle value (assumed, one number for every preset).
const refillMLP = 4

// refillNS is the cache model of a migration (one model for every
// preset): a task that changes core refills the part of its working set
// that lived in the caches private to its old core, from the shared LLC; a
// task that changes LLC fetches its whole cached working set from the old
// LLC across the fabric, or across the socket link when it changes
// socket. SMT siblings share the core's caches: nothing to refill.
func (s *Sim) refillNS(wssKB int64, d machine.Distance) int64 {
	spec := s.topo.Spec
	lines := func(kb int64) int64 { return kb * 1024 / 64 }
	switch d {
	case machine.SameLLC:
		return lines(min(wssKB, spec.PrivateKiB())) * s.l3HitNS / refillMLP
	case machine.SameSocket, machine.CrossSocket:
		return lines(min(wssKB, spec.LLCKiB())) * s.lineCost[d] / refillMLP
	}
	return 0
}

// account updates the busy/idle time of c.
func (s *Sim) account(c *cpu) { c.account(s.now) }

// ---- idle ----

// enterIdle is the transition to the idle task: the governor chooses an
// idle state and whether the tick stops (NOHZ), and the LLC's
// has_idle_cores hint may be set.
func (s *Sim) enterIdle(c *cpu) {
	c.account(s.now)
	c.idleSince = s.now
	if s.rt == nil && s.dl == nil {
		c.util.set(s.now, 0)
	} else {
		s.setClassSignals(c, nil)
	}
	s.selectIdleState(c, false)
	s.updateIdleCore(c)
}

// leaveIdle is the transition out of idle: the CPU runs again (its state's
// exit is already behind it), the governor learns how long it slept, and
// the tick restarts, aligned to the jiffy boundary.
func (s *Sim) leaveIdle(c *cpu) {
	c.account(s.now)
	c.smtHeld = false
	s.reflectIdle(c, 0, false, false)
	next := (s.now/s.tickNS + 1) * s.tickNS
	s.q.scheduleTick(s.topo.NCPU+c.id, next)
}

// updateIdleCore is __update_idle_core: a CPU entering idle whose SMT
// siblings are all idle marks its LLC as having an idle core.
func (s *Sim) updateIdleCore(c *cpu) {
	if !s.smtPresent {
		return
	}
	llc := &s.llcs[s.topo.LLC[c.id]]
	if llc.hasIdleCores {
		return
	}
	for _, id := range s.topo.CoreCPUs[c.core] {
		if id != c.id && !s.cpus[id].idle() {
			return
		}
	}
	llc.hasIdleCores = true
}

// kick makes c run schedule() at time when (a wakeup IPI or resched IPI
// arriving), keeping an earlier pending kick.
func (s *Sim) kick(c *cpu, when int64) {
	slot := 2*s.topo.NCPU + c.id
	if s.q.queued(slot) && s.q.whenOf(slot) <= when {
		return
	}
	s.q.schedule(slot, when)
}

func (s *Sim) onKick(c *cpu) {
	// scheduler_ipi (or a polling CPU leaving its loop): enqueue what
	// waits on the wake_list first.
	s.ttwuPending(c)
	if c.curr == nil {
		if c.nr > 0 || c.rtNr > 0 || c.dlNr > 0 || c.fairServer != nil && c.fairServer.onRQ {
			// (A fair server put on an idle CPU's tree: its pick finds
			// no fair task and stops it.)
			s.schedule(c)
		}
		return
	}
	if c.needResched && userPhase(c.curr) {
		s.schedule(c)
	}
}

func (s *Sim) onPhaseEnd(c *cpu) {
	if c.curr == nil {
		return
	}
	s.settle(c)
	s.continueTask(c)
}

// onTimer fires a sleeping task's timer at its hard expiry: the timer
// interrupt (hrtimer_interrupt) also runs every other timer of that CPU
// whose soft expiry has passed (expireTimers).
func (s *Sim) onTimer(t *Task) {
	if t.state != TaskBlocked || !t.sleepTimer {
		return
	}
	c := s.cpus[t.timerCPU]
	idle := c.curr == nil
	s.inTimerIRQ = true
	s.fireTimer(t)
	s.expireTimers(c)
	s.inTimerIRQ = false
	if idle && c.curr == nil && c.nr == 0 && c.wakePending == 0 {
		// The wakees went elsewhere: the idle loop chooses again.
		s.selectIdleState(c, c.tickStopped)
	}
}

// fireTimer runs sleeping task t's timer callback (hrtimer_wakeup).
func (s *Sim) fireTimer(t *Task) {
	t.sleepTimer = false
	s.disarmTimer(t)
	s.timerWakeup(t)
}

// expireTimers is __hrtimer_run_queues at a timer interrupt on c (its
// tick, or another timer's hard expiry): the queue is walked in hard-
// expiry order (ties: task order) and each timer whose soft expiry has
// passed fires; the walk stops at the first one whose soft expiry is
// still ahead (kernel/time/hrtimer.c, v5.2 and 6.x alike). Reports
// whether any fired.
func (s *Sim) expireTimers(c *cpu) bool {
	fired := false
	for len(c.timers) > 0 {
		var next *Task
		var nextHard int64
		for _, id := range c.timers {
			t := s.tasks[id]
			h := s.q.whenOf(s.taskSlot(t))
			if next == nil || h < nextHard || (h == nextHard && t.ID < next.ID) {
				next, nextHard = t, h
			}
		}
		if next.softExpiry > s.now {
			break
		}
		s.q.cancel(s.taskSlot(next))
		was := s.inTimerIRQ
		s.inTimerIRQ = true
		s.fireTimer(next)
		s.inTimerIRQ = was
		fired = true
	}
	return fired
}
