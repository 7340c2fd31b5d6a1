package engine

import (
	"fmt"
	"schedplay/engine/cpuidle"
	"schedplay/engine/machine"

	"schedplay/engine/knob"
)

// A schedClass is an era's scheduling class, after the kernel's struct
// sched_class (kernel/sched/sched.h): a table of hooks that the core calls
// without knowing which class it holds. The core — the event loop, the
// CPUs and their runqueues, try_to_wake_up (ttwu.go), schedule (cpu.go),
// the tick (balance.go's scheduler tick) and cpuidle (idle.go) — calls
// these and nothing else of a class. Each era's class owns its runqueue
// order, its select_task_rq, its load balancer entry points and its
// preemption rule. The methods are named after the kernel's hooks, with
// the flag a hook is called with spelt out where the simulation keeps the
// cases apart (enqueue_task with ENQUEUE_WAKEUP, select_task_rq with
// WF_FORK, ...).
//
// The classes (one file each): cfs (class_cfs.go: CFS, which eras 5.2
// and 6.1 run with their own wakeup paths and balancers), eevdfV66 (class_eevdf66.go: EEVDF and the v6.6
// wakeup path and balancer) and o1V267 (class_o1.go: the 2.6.7 O(1)
// scheduler, which owns the whole runqueue as it did in 2004). The
// mechanisms they share — PELT, wake_affine, the stages of
// select_idle_sibling, the balancer's group statistics, the cpumask scans
// — stay functions of *Sim that the classes call.
type schedClass interface {
	// enqueueTaskNew is enqueue_task for a forked task (wake_up_new_task's
	// activate_task): t.vruntime arrives as taskFork left it.
	enqueueTaskNew(c *cpu, t *Task)
	// enqueueTaskWakeup is enqueue_task(ENQUEUE_WAKEUP) from
	// ttwu_do_activate.
	enqueueTaskWakeup(c *cpu, t *Task)
	// detachTask and attachTask are the halves of a queued task's
	// migration (detach_task/attach_task, move_queued_task); payer is the
	// CPU doing the work.
	detachTask(c *cpu, t *Task, payer *cpu)
	attachTask(c *cpu, t *Task, payer *cpu)
	// pushCurr is the active-balance stopper's move of the task c has
	// just stopped running to dst (active_load_balance_cpu_stop).
	pushCurr(c *cpu, t *Task, dst *cpu)

	// pickNextTask is pick_next_task after put_prev_task: nil when c has
	// nothing to run.
	pickNextTask(c *cpu) *Task

	// wakeupPreempt is wakeup_preempt (check_preempt_curr in v5.2) for a
	// woken task p just enqueued on busy CPU c: must curr be rescheduled?
	wakeupPreempt(c *cpu, p *Task) bool
	// wakeupPreemptNew is the same check for a forked task (WF_FORK).
	wakeupPreemptNew(c *cpu, p *Task) bool
	// taskTick is task_tick on a busy CPU (after update_curr): must curr
	// be rescheduled?
	taskTick(c *cpu) bool

	// selectTaskRq is select_task_rq for a wakeup of p issued on CPU this
	// by cur; the Decision is scratch space the next call reuses.
	selectTaskRq(p *Task, this int, cur *Task, sync bool) *Decision
	// selectTaskRqFork is select_task_rq with WF_FORK (fork balancing)
	// from the CPU the fork ran on.
	selectTaskRqFork(t *Task, cpu int) int
	// taskFork is task_fork, on the parent's CPU pc (parent nil: a task
	// the simulation builds, forked by no modelled task).
	taskFork(pc *cpu, t, parent *Task)

	// balanceNewidle is the newly-idle balance of a CPU about to go idle
	// (the balance hook / newidle_balance); it returns the CPU time it
	// took. skipLLC leaves out the levels the shared runqueue covered.
	balanceNewidle(c *cpu, skipLLC bool) int64
	// rebalanceDomains is the periodic balance (rebalance_domains, or
	// 2.6's rebalance_tick) of c as idle type it, paid by payer from at;
	// it returns the CPU time the passes took.
	rebalanceDomains(c *cpu, it idleType, payer *cpu, at int64) int64

	// The runqueue's own bookkeeping, called by the core and by the
	// fair code the classes share (fair.go):
	// enqueueEntity and dequeueEntity are __enqueue_entity and
	// __dequeue_entity (the rb-tree, 6.6's avg_vruntime sum, 2.6's
	// priority arrays).
	enqueueEntity(c *cpu, t *Task)
	dequeueEntity(c *cpu, t *Task)
	// updateMinVruntime is update_min_vruntime.
	updateMinVruntime(c *cpu)
	// updateDeadline is update_curr's update_deadline (6.6's EEVDF).
	updateDeadline(c *cpu, t *Task)
	// updateEntityLag is dequeue_entity's update_entity_lag (6.6).
	updateEntityLag(c *cpu, t *Task)
	// deactivateTask is the class's part of deactivate_task after the
	// dequeue (2.6: the priority array and the sleep average).
	deactivateTask(t *Task, state TaskState)
	// putPrevTask is schedule's put_prev_task of the task that ran
	// (2.6: its timeslice and sleep average); setNextTask is
	// set_next_task of the task picked (2.6: its timestamp).
	putPrevTask(prev *Task)
	setNextTask(t *Task)
	// balanceCallback runs on c after the switch to next (__schedule's
	// balance callbacks: the RT class's push of what next displaced).
	balanceCallback(c *cpu, next *Task)
	// woken is task_woken after p's wakeup enqueue on c (the RT class
	// pushes a woken task that could not preempt).
	woken(c *cpu, p *Task)
	// taskTickIdle is the class's part of the tick on an idle CPU (2.6:
	// the CPU's load history).
	taskTickIdle(c *cpu)
	// initRQ sets up the class's runqueue of c (sched_init's init_*_rq).
	initRQ(c *cpu)
	// checkRQ checks the class's runqueue invariants (--debug).
	checkRQ(c *cpu) error
}

// coreRules are the differences of an era that are data rather than a
// class: which version of a mechanism the core and the shared fair code
// run, each named after the mechanism and the kernel that brought it.
type coreRules struct {
	// runnableAvg: PELT keeps each runqueue's runnable_avg (v5.7,
	// "sched/pelt: Add a new runnable average signal"); the v5.5+
	// balancer's group statistics read it.
	runnableAvg bool
	// wakeStamp: a wakeup of an idle CPU ages avg_idle into
	// rq->wake_stamp and wake_avg_idle (v5.13, "sched/fair: Age the
	// average idle time"), which 6.x's newidle balance reads.
	wakeStamp bool
	// nohz: idle CPUs stop their tick and a busy CPU kicks an idle one to
	// balance for them (NO_HZ, 2.6.21 on).
	nohz bool
	// cpuidle: a governor picks the idle state (cpuidle, 2.6.24 on);
	// without it the idle loop halts in the shallowest state and keeps
	// its tick (defaultIdle).
	cpuidle bool
	// menu: whose menu governor cpuidle_governor=menu runs: v5.2's, or
	// 6.1's and 6.6's (nanoseconds, the 6.x state-0 and tick rules; 6.6
	// also skips the timers below RESIDENCY_THRESHOLD_NS). engine/cpuidle
	// menu6x.go lists the differences.
	menu cpuidle.MenuVersion
	// wakeListIdle: ttwu_queue_cond also puts a wakee on the wake list
	// of a same-LLC target that runs nothing (nr_running == 0), which then
	// enqueues it itself (v6.0, "sched: Remove the limitation of WF_ON_CPU
	// on wakelist if wakee cpu is idle"; core.c of 6.1 and 6.6). v5.2
	// queues remotely only across LLCs.
	wakeListIdle bool
	// smtNiceSlices: the class has no timeslices of its own, so the SMT
	// nice patch's test reads the O(1) timeslice the engine counts beside
	// it (smtnice.go); the 2.6 class counts its real slices.
	smtNiceSlices bool
	// noRT names why the era cannot run SCHED_FIFO/SCHED_RR tasks yet
	// ("" when it can: rt.go's class above the fair one, or its own).
	noRT string
	// rtInClass: the era's class holds RT priorities itself (2.6.7's
	// O(1) arrays, o1.go), with no rt.go class above it.
	rtInClass bool
	// rtDistribute: find_lowest_rq and find_later_rq pick with
	// cpumask_any_and_distribute (v5.11, "sched,rt: Use
	// cpumask_any*_distribute()"), not cpumask_first_and (v5.2).
	rtDistribute bool
	// noDL names why the era cannot run SCHED_DEADLINE tasks ("" when
	// it can: dl.go's class above the others).
	noDL string
	// dlGrubMax: grub_reclaim compares with max_bw and applies bw_ratio
	// after the max (v6.5, "sched/deadline: Fix reclaim inaccuracy with
	// SMP"); v5.2 and Debian's 6.1 compare with BW_UNIT - u·bw_ratio.
	dlGrubMax bool
	// dlChargesRT: update_curr_dl adds deadline time to the RT
	// runqueue's rt_time ("we share the rt bandwidth"), which 6.12 keeps
	// only under CONFIG_RT_GROUP_SCHED (not set in Debian's build).
	dlChargesRT bool
	// dlPeriodLimits: __checkparam_dl bounds the period by
	// sched_deadline_period_min_us/max_us (v5.10; not in v5.2).
	dlPeriodLimits bool
	// fairServer: each CPU's fair class runs under a deferred deadline
	// server (v6.12, "sched/fair: Fair server interface" and "sched/
	// deadline: Deferrable dl server"; dlserver.go), built with the
	// deadline class, which the first RT task builds too.
	fairServer bool
	// dlOverloadPushable: a CPU's deadline runqueue is "overloaded" (it
	// pushes) as soon as it holds a pushable task — queued, not running,
	// free to move — whatever else it holds (v6.7, "sched/deadline: Make
	// dl_rq->pushable_dl_tasks update drive dl_rq->overloaded":
	// enqueue_pushable_dl_task sets it; Debian's 6.12 deadline.c). Before,
	// it took a migratory task and dl_nr_running > 1 (update_dl_migration,
	// and push_dl_task's !rq->dl.overloaded return in 5.2, 6.1 and 6.6):
	// so in 6.12 a deadline task replenished on a CPU where it does not
	// run at once is pushed to a free CPU (an idle SMT sibling first).
	dlOverloadPushable bool
	// rtNoBandwidth: update_curr_rt does not throttle (v6.12 keeps RT
	// throttling only under CONFIG_RT_GROUP_SCHED, which Debian's
	// build does not set): the fair server replaces it.
	rtNoBandwidth bool
}

// fairRules are what differs between the fair classes' eras inside the
// fair mechanisms both run: data chosen when the era is built (eraDefs),
// each named for the kernel change it models, so that no shared body tests
// the era. A class without the fair mechanisms (the O(1) class) leaves it
// zero.
type fairRules struct {
	// selectIdleSibling is the era's select_idle_sibling (a method
	// expression: calling it allocates nothing).
	selectIdleSibling func(s *Sim, p *Task, prev, target int, cur *Task, d *Decision) (int, Stage)
	// wakeup52: the era's select_idle_sibling is v5.2's (wakeup52.go),
	// whose stages a wake policy calls separately (policy.go).
	wakeup52 bool
	// wakerRecentUsed: select_task_rq_fair stores the waker's CPU in
	// current->recent_used_cpu when an affine wakeup was wanted (v4.16 to
	// v5.12; v5.13 moved recent_used_cpu into select_idle_sibling, which
	// then stores prev in the wakee's).
	wakerRecentUsed bool
	// affineIdlePrev: wake_affine_idle keeps an idle prev when neither an
	// idle, cache-sharing waker CPU nor a sync wakeup decided (6.6's
	// wake_affine_idle; v5.2 has no such test).
	affineIdlePrev bool
	// cpuLoadAvg: cpu_load() is the runqueue's load_avg with blocked load
	// (v5.7, "sched/fair: Replace runnable_load_avg by load_avg"), not
	// runnable_load_avg: in wake_affine_weight and find_idlest_group_cpu.
	cpuLoadAvg bool
	// imbalancePct is sd->imbalance_pct as the era's sd_init sets it.
	imbalancePct func(*machine.Domain) int64

	// balancer is the era's load balancer (balance*.go): which
	// load_balance, get_sd_balance_interval and newidle balance it runs. The v5.5
	// rework ("sched/fair: Rework load_balance") replaced the group
	// statistics, imbalance types and active-balance rules, so each era
	// has its own load_balance body; rebalance_domains and
	// can_migrate_task around it are shared. (A small value rather than
	// function values: called through a function value, the balancer's
	// stack-allocated lbEnv would escape to the heap.)
	balancer balancerKind
	// smtBalance: the v5.5+ balancer's SMT rules of v6.5/v6.6 ("sched/fair:
	// Determine active load balance for SMT sched groups", "sched/fair:
	// Implement prefer sibling imbalance calculation between asymmetric
	// groups", "sched/fair: Rework should_we_balance"): group_smt_balance,
	// sibling_imbalance per core, should_we_balance preferring an idle
	// core, the SMT ties of update_sd_pick_busiest, and
	// cpu_util_cfs_boost in find_busiest_queue. 6.1 has none of them.
	smtBalance bool
	// utilShrBound: detach_tasks compares a task's utilisation, like its
	// load, shifted right by the failed passes (shr_bound), in Debian's
	// 6.1 (6.1.172 text); v6.6 compares it whole.
	utilShrBound bool
	// decayLastLevel: rebalance_domains' need_decay is what the last
	// level's update_newidle_cost said (v5.16, "sched/fair: Wait before
	// decaying max_newidle_lb_cost"), not whether any level decayed.
	decayLastLevel bool
	// smtCacheCold: task_hot says no task is cache hot between SMT
	// siblings (SD_SHARE_CPUCAPACITY: they share the caches; absent at
	// v5.2, present at 6.1).
	smtCacheCold bool
	// perCPUKthreadStays: can_migrate_task leaves a per-CPU kthread where
	// it is before any affinity bookkeeping (v5.12, "sched/fair: Ignore
	// percpu threads for imbalance pulls").
	perCPUKthreadStays bool
	// nodeReclaimDistance: sd_init compares a NUMA level's distance with
	// the variable node_reclaim_distance, which the architecture may
	// raise (32 on AMD Zen: machine.Spec.NodeReclaimDistance), not with
	// the constant RECLAIM_DISTANCE (v5.4, "sched/topology: Improve load
	// balancing on AMD EPYC systems"; numadist.go).
	nodeReclaimDistance bool
	// newidleDetachOne: detach_tasks stops after the first task a newly
	// idle balance detaches ("NEWIDLE balancing is a source of latency,
	// so preemptible kernels will stop after the first task", under
	// #ifdef CONFIG_PREEMPTION: 6.1.192 fair.c 8555, 6.12.117 fair.c
	// 9716). Debian's 6.1 and 6.12 builds have CONFIG_PREEMPTION=y
	// (PREEMPT_DYNAMIC, booting voluntary), and the 6.x eras model them;
	// v5.2's test is #ifdef CONFIG_PREEMPT, which the 2019 distribution
	// kernels (PREEMPT_VOLUNTARY, no PREEMPT_DYNAMIC yet) did not set.
	newidleDetachOne bool
	// customSlices: a fair task may ask for its own slice
	// (sched_attr.sched_runtime → se->custom_slice, v6.12), which
	// place_entity and update_deadline keep (TaskSpec.Slice).
	customSlices bool
	// newidleRandom: the newly idle balance samples its levels (NI_RANDOM)
	// and stops on continue_balancing (6.12.117's sched_balance_newidle,
	// backport "sched/fair: Proportional newidle balance", Debian 6.12.69).
	newidleRandom bool
	// pickStrictCurr: pick_eevdf returns a lone entity untested and keeps
	// curr only when its deadline is strictly the earliest (6.12.117's
	// pick_eevdf; v6.6's __pick_eevdf kept curr on ties).
	pickStrictCurr bool
	// yieldTask is the era's yield_task_fair for curr t of c, which has
	// other tasks queued (yield.go); nil: the era has no fair yield
	// modelled (the O(1) class).
	yieldTask func(s *Sim, c *cpu, t *Task)
}

// An eraDef is what the engine builds for an era: its class and its core
// rules. The knob package knows the era's name and knobs.
type eraDef struct {
	class func(*Sim) schedClass
	rules coreRules
	fair  fairRules // the fair mechanisms' era data (wakeup.go); zero for a class without them
}

// eraDefs are the eras the engine can run: the one place that knows which
// era runs which class.
var eraDefs = map[knob.Era]eraDef{
	knob.Era52: {func(s *Sim) schedClass { return cfs{s} },
		coreRules{nohz: true, cpuidle: true, smtNiceSlices: true, dlChargesRT: true},
		fairRules{
			selectIdleSibling: (*Sim).selectIdleSibling, wakeup52: true, wakerRecentUsed: true, imbalancePct: domImbalancePct,
			balancer: balancer52, yieldTask: (*Sim).yieldTaskSkipBuddy,
		}},
	knob.EraO1: {func(s *Sim) schedClass { return o1V267{s} }, coreRules{rtInClass: true, noDL: "SCHED_DEADLINE came with v3.14 (2014): the 2.6.7 O(1) scheduler has no deadline class"}, fairRules{}},
	// 6.1: CFS with the v6.x wakeup path and the v5.5+ balancer, each
	// checked against Debian's linux-source-6.1 (6.1.172).
	knob.Era61: {func(s *Sim) schedClass { return cfs{s} },
		coreRules{runnableAvg: true, wakeStamp: true, wakeListIdle: true, nohz: true, cpuidle: true, menu: cpuidle.Menu61, smtNiceSlices: true, rtDistribute: true,
			dlChargesRT: true, dlPeriodLimits: true},
		fairRules{
			selectIdleSibling: (*Sim).selectIdleSibling66, affineIdlePrev: true, cpuLoadAvg: true, imbalancePct: imbPct66,
			balancer: balancer66, utilShrBound: true, decayLastLevel: true, smtCacheCold: true, perCPUKthreadStays: true,
			nodeReclaimDistance: true, newidleDetachOne: true, yieldTask: (*Sim).yieldTaskSkipBuddy,
		}},
	knob.Era66: {func(s *Sim) schedClass { return eevdfV66{s} },
		coreRules{runnableAvg: true, wakeStamp: true, wakeListIdle: true, nohz: true, cpuidle: true, menu: cpuidle.Menu66, smtNiceSlices: true, rtDistribute: true,
			dlGrubMax: true, dlChargesRT: true, dlPeriodLimits: true},
		fairRules{
			selectIdleSibling: (*Sim).selectIdleSibling66, affineIdlePrev: true, cpuLoadAvg: true, imbalancePct: imbPct66,
			balancer: balancer66, smtBalance: true, decayLastLevel: true, smtCacheCold: true, perCPUKthreadStays: true,
			nodeReclaimDistance: true, newidleDetachOne: true, yieldTask: (*Sim).yieldTaskDeadline,
		}},
	// 6.12 (Debian's 6.12.117): EEVDF with delayed dequeue
	// (eevdf612.go), 6.6's wakeup path (SIS_PROP is absent in the era's
	// knobs, so select_idle_cpu runs SIS_UTIL only) and 6.6's balancer,
	// with detach_tasks' util compared after shr_bound as load is
	// (fair.c 9678 of 6.12.117; docs/era612-research.md §5.3).
	knob.Era612: {func(s *Sim) schedClass { return eevdfV612{s} },
		coreRules{runnableAvg: true, wakeStamp: true, wakeListIdle: true, nohz: true, cpuidle: true, menu: cpuidle.Menu66, smtNiceSlices: true, rtDistribute: true,
			dlGrubMax: true, dlPeriodLimits: true, fairServer: true, rtNoBandwidth: true, dlOverloadPushable: true},
		fairRules{
			selectIdleSibling: (*Sim).selectIdleSibling66, affineIdlePrev: true, cpuLoadAvg: true, imbalancePct: imbPct66,
			balancer: balancer66, smtBalance: true, utilShrBound: true, decayLastLevel: true, smtCacheCold: true, perCPUKthreadStays: true,
			nodeReclaimDistance: true, newidleDetachOne: true, customSlices: true, newidleRandom: true, pickStrictCurr: true,
			yieldTask: (*Sim).yieldTaskDeadline,
		}},
}

// RegisterEra makes the engine run era e (registered with
// knob.RegisterEra) as it runs era like: the same class and core rules,
// with e's own knob defaults. Call it from an init function.
func RegisterEra(e, like knob.Era) error {
	d, ok := eraDefs[like]
	if !ok {
		return fmt.Errorf("engine: era %s has no class", like)
	}
	if _, dup := eraDefs[e]; dup {
		return fmt.Errorf("engine: era %s is registered already", e)
	}
	eraDefs[e] = d
	return nil
}
