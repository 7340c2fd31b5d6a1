package knob

// ID indexes the knob table.
type ID int

// Knob ids, in table order.
const (
	// Wakeup-path features (kernel sched_feat names).
	SIS_PROP ID = iota
	SIS_AVG_CPU
	SIS_CORE
	SIS_BOUND
	SIS_ROTATE
	SIS_TARGET_CORE
	SIS_UTIL
	LN_SEARCH
	LN_PREEMPT
	LN_SKIP_CORE
	SMT_NICE
	SHARED_RUNQ
	SRQ_LLC_SHARD
	SRQ_OVERLOAD
	NUMA_BALANCING
	WA_IDLE
	WA_WEIGHT
	WA_BIAS
	// Fair-class features.
	GENTLE_FAIR_SLEEPERS
	START_DEBIT
	WAKEUP_PREEMPTION
	// EEVDF features (v6.6 kernel/sched/features.h).
	PLACE_LAG
	PLACE_DEADLINE_INITIAL
	RUN_TO_PARITY
	NEXT_BUDDY
	// Model switches.
	LB_PERIODIC
	LB_NEWIDLE
	IDLE_STATES
	CpuidleGovernor
	MaxCState
	PMQoSLatencyUS
	// Tunables (sysctl names without the sched_ prefix where the kernel has one).
	SchedLatency
	SchedMinGranularity
	SchedWakeupGranularity
	SchedBaseSlice
	SchedMigrationCost
	SchedNrMigrate
	TunableScaling
	HZ
	PerCPUGain
	O1MinTimesliceMS
	O1MaxTimesliceMS
	O1StarvationLimitMS
	ShardSize
	NUMAScanDelayMS
	// Costs.
	ProbeNS
	WakeNS
	IPINS
	CtxSwitchNS
	MMSwitchNS
	MigrateSMTNS
	MigrateLLCNS
	MigrateCrossLLCNS
	MigrateCrossSocketNS
	LBBaseNS
	LBCPUNS
	TimerSlackNS
	SRQLockNS
	IPISendNS
	EnqueueNS
	LineSMTNS
	LineLLCNS
	LineCrossLLCNS
	LineCrossSocketNS
	L3HitNS
	// EraKnob selects the whole kernel simulated (era.go).
	EraKnob
	// BASE_SLICE is 6.1's floor on sched_slice (after the era knob so
	// that the IDs before it keep their values).
	BASE_SLICE
	// EEVDF features new in 6.12 (features.h of Debian's 6.12.117), after
	// BASE_SLICE for the same reason.
	PICK_BUDDY
	DELAY_DEQUEUE
	DELAY_ZERO
	PREEMPT_SHORT
	PLACE_REL_DEADLINE
	NI_RANDOM
	// The RT class (rt.c), after NI_RANDOM for the same reason.
	RT_RUNTIME_SHARE
	RT_PUSH_IPI
	SchedRTPeriodUS
	SchedRTRuntimeUS
	SchedRRTimesliceMS

	numKnobs
)

const (
	us = int64(1000)
	ms = 1000 * us
)

// SHARED_RUNQ policies.
const (
	SharedRunqOff int64 = iota
	SharedRunqWakeup
	SharedRunqAll
)

// cpuidle governors (the order of cpuidle.Names).
const (
	GovernorMenu int64 = iota
	GovernorTEO
	GovernorNone
)

// Tunable-scaling modes (sysctl_sched_tunable_scaling).
const (
	ScalingNone int64 = iota
	ScalingLog
	ScalingLinear
)

var table = [numKnobs]Def{
	SIS_PROP: {Name: "SIS_PROP", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "select_idle_cpu scans at most span·(avg_idle/512)/avg_scan_cost CPUs, floor 4 (which probes 3) — kernel, v4.13..v6.6"},
	SIS_AVG_CPU: {Name: "SIS_AVG_CPU", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "skip select_idle_cpu entirely when avg_idle/512 < avg_scan_cost — kernel, default off, removed in v5.12"},
	SIS_CORE: {Name: "SIS_CORE", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "run select_idle_core (look for a fully idle core) before select_idle_cpu — sis-scalability-2019 patches 4-5"},
	SIS_BOUND: {Name: "SIS_BOUND", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "under SIS_PROP, clamp select_idle_cpu's nr to [floor, 2·floor], floor = max(2, SMT width of target) — sis-scalability-2019 patch 1/7"},
	SIS_ROTATE: {Name: "SIS_ROTATE", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "select_idle_cpu starts at next_cpu[target] and records every CPU it visits there, idle or not (rotating window) — patches 2-3/7"},
	SIS_TARGET_CORE: {Name: "SIS_TARGET_CORE", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "select_idle_cpu first probes the target's own SMT siblings, then the window — Parth Shah's diff in the review of patch 5/7"},
	SIS_UTIL: {Name: "SIS_UTIL", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "select_idle_cpu probes nr_idle_scan CPUs, computed from LLC utilisation at the LLC-level periodic balance (v6.0 Chen Yu); overrides SIS_PROP's nr; 0 means no scan unless LN_SEARCH is on"},
	LN_SEARCH: {Name: "LN_SEARCH", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "latency-nice sets select_idle_cpu's depth: W+(L-W)·(19-ln)/39 CPUs (-20 whole LLC, 19 one core); replaces SIS_PROP/SIS_BOUND/SIS_UTIL's nr, even SIS_UTIL's no-scan verdict — RESEND thread"},
	LN_PREEMPT: {Name: "LN_PREEMPT", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "latency offset = latency_nice·(sched_latency/2)/20 shifts wakeup/tick preemption: negative offsets count relative to curr's (-20 preempts sooner), a positive one delays its own preemption; capped at sched_latency/2 - min_gran — Guittot latency-nice v12 5/8"},
	LN_SKIP_CORE: {Name: "LN_SKIP_CORE", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "latency-tolerant tasks (latency-nice > 0) skip select_idle_core — RESEND thread (Parth Shah)"},
	SMT_NICE: {Name: "SMT_NICE", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "a lower-priority task may not run beside a higher-priority sibling until that one's O(1) timeslice left ×(100-per_cpu_gain)/100 ≤ its own timeslice — smt-nice-2004"},
	SHARED_RUNQ: {Name: "SHARED_RUNQ", Kind: Enum, Group: Feature, Default: SharedRunqOff, Max: 2, Values: []string{"off", "wakeup", "all"},
		Doc: "per-LLC sharded FIFO of runnable tasks filled on wakeup (or every enqueue); a newly idle CPU takes the head of its shard if allowed, else tries the next shard — v3 (Vernet, Aug 2023)"},
	SRQ_LLC_SHARD: {Name: "SRQ_LLC_SHARD", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "SHARED_RUNQ: one shard per LLC, ignoring shard_size (K Prateek Nayak's tests set SHARED_RUNQ_SHARD_SZ to the LLC size, 16 on Zen3)"},
	SRQ_OVERLOAD: {Name: "SRQ_OVERLOAD", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "SHARED_RUNQ: pull only while the root domain is overloaded, and skip shards whose overload flag (set when one of its runqueues reaches 2 tasks, cleared when found empty) is clear — K Prateek Nayak"},
	NUMA_BALANCING: {Name: "NUMA_BALANCING", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "automatic NUMA balancing (kernel.numa_balancing=1, on by default on RHEL/OL 2-socket servers in 2019): a task off its memory's node moves to a CPU there (idle, or busy when the load allows) or swaps with a task misplaced the other way (v5.2 task_numa_compare); the balancer resists moving it away"},
	WA_IDLE: {Name: "WA_IDLE", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "wake_affine: prefer an idle waker CPU sharing cache with prev, or the waker's CPU on a sync wakeup with one task running — kernel"},
	WA_WEIGHT: {Name: "WA_WEIGHT", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "wake_affine: pull to the waker's CPU when its load plus the wakee's is below prev's — kernel"},
	WA_BIAS: {Name: "WA_BIAS", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "wake_affine weight test gives prev a (imbalance_pct-100)/2 % handicap (8% at LLC level) — kernel"},
	GENTLE_FAIR_SLEEPERS: {Name: "GENTLE_FAIR_SLEEPERS", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "a waking sleeper is placed at min_vruntime - sched_latency/2 instead of - sched_latency — kernel"},
	START_DEBIT: {Name: "START_DEBIT", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "a new task starts one vslice after min_vruntime — kernel"},
	WAKEUP_PREEMPTION: {Name: "WAKEUP_PREEMPTION", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "a woken task preempts the current one when its vruntime leads by more than the wakeup granularity — kernel"},
	PLACE_LAG: {Name: "PLACE_LAG", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "EEVDF: a task enqueued (wakeup, migration) keeps the lag it had when dequeued, inflated by (W+w)/W so it survives its own effect on avg_vruntime; off: placed at avg_vruntime (zero lag) — v6.6"},
	PLACE_DEADLINE_INITIAL: {Name: "PLACE_DEADLINE_INITIAL", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "EEVDF: task_fork_fair gives a new task half a slice to its first deadline (v6.6's wake_up_new_task then re-places it without ENQUEUE_INITIAL, which undoes it) — v6.6"},
	RUN_TO_PARITY: {Name: "RUN_TO_PARITY", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "EEVDF: once picked, curr keeps the CPU while it is eligible and has not used up the slice it was picked with (no wakeup preemption before) — v6.6"},
	NEXT_BUDDY: {Name: "NEXT_BUDDY", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "EEVDF: a non-fork wakee becomes the next buddy and is picked next if eligible, preempting or not — v6.6 (default off)"},
	PICK_BUDDY: {Name: "PICK_BUDDY", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "EEVDF 6.12: pick_next_entity honours the next buddy (NEXT_BUDDY only sets it) when it is eligible — features.h:41, backport \"Untangle NEXT_BUDDY and pick_next_task()\" (6.12.13)"},
	DELAY_DEQUEUE: {Name: "DELAY_DEQUEUE", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "EEVDF 6.12: a task that sleeps with negative lag stays queued (sched_delayed) until picked, when it leaves for real, or woken, when ttwu_runnable requeues it on its CPU without select_task_rq — dequeue_entity, fair.c:5549 (6.12.117)"},
	DELAY_ZERO: {Name: "DELAY_ZERO", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "EEVDF 6.12: a delayed task leaves (or is requeued) with its positive lag clipped to 0 — finish_delayed_dequeue_entity / requeue_delayed_entity, fair.c:5541, 6984 (6.12.117)"},
	PREEMPT_SHORT: {Name: "PREEMPT_SHORT", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "EEVDF 6.12: an eligible wakee with a shorter slice cancels curr's RUN_TO_PARITY protection (and preempts if it would be picked); update_curr then reschedules an unprotected ineligible curr — do_preempt_short / did_preempt_short, fair.c:1180-1191 (6.12.117)"},
	PLACE_REL_DEADLINE: {Name: "PLACE_REL_DEADLINE", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "EEVDF 6.12: a task moved without sleeping (load balance, active balance) keeps its deadline relative to its vruntime instead of getting a fresh slice — dequeue_entity / place_entity, fair.c:5574, 5294 (6.12.117)"},
	NI_RANDOM: {Name: "NI_RANDOM", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "6.12: the newly idle balance runs each level with probability (2 + newidle_ratio)/1024, newidle_ratio being the level's recent success rate ×1024 — sched_balance_newidle, fair.c:12943, backport \"sched/fair: Proportional newidle balance\" (6.12.69)"},
	RT_RUNTIME_SHARE: {Name: "RT_RUNTIME_SHARE", Kind: Bool, Group: Feature, Default: 0, Max: 1,
		Doc: "RT throttling: a CPU whose RT tasks used up sched_rt_runtime_us borrows unused runtime from the other CPUs' RT runqueues, up to the whole period (rt.c do_balance_runtime); on in v5.2, off by default from v5.17 (\"sched/rt: Disable RT_RUNTIME_SHARE by default\")"},
	RT_PUSH_IPI: {Name: "RT_PUSH_IPI", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "RT pull: a CPU whose priority dropped asks the RT-overloaded CPUs, one after the other, to push their tasks (tell_cpu_to_push, rto_push_irq_work_func) instead of taking their tasks itself; the IPIs' latency is not simulated — kernel features.h, on since v4.6"},
	LB_PERIODIC: {Name: "LB_PERIODIC", Kind: Bool, Group: Model, Default: 1, Max: 1,
		Doc: "periodic load balance per domain at the kernel's intervals (and NOHZ idle balance on behalf of idle CPUs)"},
	LB_NEWIDLE: {Name: "LB_NEWIDLE", Kind: Bool, Group: Model, Default: 1, Max: 1,
		Doc: "newly-idle balance: a CPU about to idle pulls work, gated by avg_idle vs sched_migration_cost"},
	IDLE_STATES: {Name: "IDLE_STATES", Kind: Bool, Group: Model, Default: 1, Max: 1,
		Doc: "idle CPUs enter the idle state their cpuidle governor chooses and pay its measured exit time when woken; off: waking an idle CPU costs nothing"},
	CpuidleGovernor: {Name: "cpuidle_governor", Kind: Enum, Group: Model, Default: GovernorMenu, Max: 2, Values: []string{"menu", "teo", "none"},
		Doc: "cpuidle governor as in v5.2: menu (next timer × correction factor, typical interval), teo (timer events oriented, new in 5.1), none (always the shallowest state)"},
	MaxCState: {Name: "max_cstate", Kind: Int, Group: Model, Default: 7, Min: 0, Max: 7,
		Doc: "deepest idle state registered, by index in the preset's list (POLL is 0 where the preset has it): like intel_idle.max_cstate / processor.max_cstate; 0 on an x86 preset is idle=poll"},
	PMQoSLatencyUS: {Name: "pm_qos_latency_us", Kind: Int, Group: Model, Default: 2000000000, Min: 0, Max: 2000000000, Unit: "us",
		Doc: "PM QoS CPU/DMA latency limit (/dev/cpu_dma_latency): states whose declared exit latency exceeds it are not chosen; 2000 s = no limit"},

	SchedLatency: {Name: "sched_latency_ns", Kind: Int, Group: Tunable, Default: 6 * ms, Min: 100 * us, Max: 1000 * ms, Unit: "ns",
		Doc: "CFS targeted preemption latency, before scaling by 1+ilog2(min(ncpus,8)) — kernel 6 ms"},
	SchedMinGranularity: {Name: "sched_min_granularity_ns", Kind: Int, Group: Tunable, Default: 750 * us, Min: 100 * us, Max: 1000 * ms, Unit: "ns",
		Doc: "minimum slice before tick preemption, before scaling — kernel 0.75 ms"},
	SchedWakeupGranularity: {Name: "sched_wakeup_granularity_ns", Kind: Int, Group: Tunable, Default: 1 * ms, Min: 0, Max: 1000 * ms, Unit: "ns",
		Doc: "vruntime lead a wakee needs to preempt, before scaling — kernel 1 ms"},
	SchedBaseSlice: {Name: "sched_base_slice_ns", Kind: Int, Group: Tunable, Default: 750 * us, Min: 100 * us, Max: 1000 * ms, Unit: "ns",
		Doc: "EEVDF request size r_i: a task's virtual deadline is vruntime + slice/weight, before scaling by 1+ilog2(min(ncpus,8)) — kernel 0.75 ms (v6.6)"},
	SchedMigrationCost: {Name: "sched_migration_cost_ns", Kind: Int, Group: Tunable, Default: 500 * us, Min: 0, Max: 1000 * ms, Unit: "ns",
		Doc: "tasks that ran more recently than this are cache-hot for the balancer; newidle balance needs avg_idle above it — kernel 500 us"},
	SchedNrMigrate: {Name: "sched_nr_migrate", Kind: Int, Group: Tunable, Default: 32, Min: 1, Max: 1024,
		Doc: "most tasks one load_balance pass detaches — kernel 32"},
	SchedRTPeriodUS: {Name: "sched_rt_period_us", Kind: Int, Group: Tunable, Default: 1000000, Min: 1000, Max: 10000000, Unit: "us",
		Doc: "RT throttling: the period of the RT bandwidth timer (kernel.sched_rt_period_us, 1 s)"},
	SchedRTRuntimeUS: {Name: "sched_rt_runtime_us", Kind: Int, Group: Tunable, Default: 950000, Min: -1, Max: 10000000, Unit: "us",
		Doc: "RT throttling: RT tasks may run this long per period on a CPU, the rest is left to the fair class (kernel.sched_rt_runtime_us, 950 ms); -1 turns throttling off (RUNTIME_INF)"},
	SchedRRTimesliceMS: {Name: "sched_rr_timeslice_ms", Kind: Int, Group: Tunable, Default: 100, Min: 1, Max: 10000, Unit: "ms",
		Doc: "SCHED_RR: the round-robin timeslice, counted in ticks (kernel.sched_rr_timeslice_ms, RR_TIMESLICE = 100 ms)"},
	TunableScaling: {Name: "sched_tunable_scaling", Kind: Enum, Group: Tunable, Default: ScalingLog, Max: 2, Values: []string{"none", "log", "linear"},
		Doc: "how latency/granularities scale with CPU count: none, 1+ilog2(min(n,8)) (kernel default), or min(n,8)"},
	HZ: {Name: "hz", Kind: Int, Group: Tunable, Default: 1000, Min: 100, Max: 1000, Unit: "Hz",
		Doc: "scheduler tick rate (CONFIG_HZ); 1000 as in the RHEL/Oracle Linux server kernels of the 2019 measurements"},

	PerCPUGain: {Name: "per_cpu_gain", Kind: Int, Group: Tunable, Default: 15, Min: 0, Max: 100, Unit: "%",
		Doc: "SMT_NICE: CPU % a sibling thread adds; 15 for the Pentium 4 in the 2004 patch (25 from 2.6.8-rc2-mm1)"},
	O1MinTimesliceMS: {Name: "min_timeslice_ms", Kind: Int, Group: Tunable, Default: 10, Min: 1, Max: 1000, Unit: "ms",
		Doc: "2.6 O(1): MIN_TIMESLICE, the nice 19 timeslice (kernel/sched.c 2.6.7: 10 ms); with max_timeslice_ms it also sets AVG_TIMESLICE, MAX_SLEEP_AVG and the starvation limit"},
	O1MaxTimesliceMS: {Name: "max_timeslice_ms", Kind: Int, Group: Tunable, Default: 200, Min: 1, Max: 10000, Unit: "ms",
		Doc: "2.6 O(1): MAX_TIMESLICE, the nice -20 timeslice (2.6.7: 200 ms; nice 0 gets MIN+(MAX-MIN)·19/39 = 102 ms)"},
	O1StarvationLimitMS: {Name: "starvation_limit_ms", Kind: Int, Group: Tunable, Default: -1, Min: -1, Max: 100000, Unit: "ms",
		Doc: "2.6 O(1): STARVATION_LIMIT; interactive tasks stop being reinserted into the active array once the first expired task has waited this × nr_running; -1 = MAX_SLEEP_AVG (2.6.7: 1020 ms at the default timeslices), 0 = never starving"},
	ShardSize: {Name: "shard_size", Kind: Int, Group: Tunable, Default: 6, Min: 1, Max: 1024, Unit: "CPUs",
		Doc: "SHARED_RUNQ: CPUs per shard; an LLC has ceil(llc_size/shard_size) shards (SHARED_RUNQ_SHARD_SZ = 6 in v3)"},
	NUMAScanDelayMS: {Name: "numa_balancing_scan_delay_ms", Kind: Int, Group: Tunable, Default: 1000, Min: 0, Max: 600000, Unit: "ms",
		Doc: "NUMA_BALANCING: a task's first placement check comes this long after it starts (kernel 1000 ms); retries every scan period (1000 ms)/16"},
	ProbeNS: {Name: "probe_ns", Kind: Int, Group: Cost, Default: 10, Min: 0, Max: 100 * us, Unit: "ns",
		Doc: "instructions per CPU the idle search examines (mask walk, available_idle_cpu), on top of fetching that CPU's runqueue cache line (line_*_ns)"},
	WakeNS: {Name: "wake_ns", Kind: Int, Group: Cost, Default: 600, Min: 0, Max: 1 * ms, Unit: "ns",
		Doc: "waker CPU time of try_to_wake_up itself (pi_lock, state checks, select_task_rq's fixed part, stats), excluding the idle search, the enqueue and the IPI"},
	IPINS: {Name: "ipi_ns", Kind: Int, Group: Cost, Default: 1500, Min: 0, Max: 1 * ms, Unit: "ns",
		Doc: "wakeup/reschedule IPI delivery: from the sender's ICR write to the target running scheduler_ipi (not counting its idle-state exit)"},
	CtxSwitchNS: {Name: "ctx_switch_ns", Kind: Int, Group: Cost, Default: 1000, Min: 0, Max: 1 * ms, Unit: "ns",
		Doc: "CPU time of a context switch between two threads of one address space (registers, FPU, scheduler bookkeeping)"},
	MMSwitchNS: {Name: "mm_switch_ns", Kind: Int, Group: Cost, Default: 300, Min: 0, Max: 1 * ms, Unit: "ns",
		Doc: "extra CPU time when the switch also changes address space (switch_mm: CR3/ASID load and TLB refill); an idle CPU keeps the last one loaded (lazy TLB)"},
	MigrateSMTNS: {Name: "migrate_smt_ns", Kind: Int, Group: Cost, Default: -1, Min: -1, Max: 100 * ms, Unit: "ns",
		Doc: "override: refill work after moving to an SMT sibling; -1 = from the cache model (siblings share L1/L2: none)"},
	MigrateLLCNS: {Name: "migrate_llc_ns", Kind: Int, Group: Cost, Default: -1, Min: -1, Max: 100 * ms, Unit: "ns",
		Doc: "override: refill work after moving to another core of the LLC; -1 = from the cache model (min(wss, L2) refilled from L3 at l3_hit_ns)"},
	MigrateCrossLLCNS: {Name: "migrate_cross_llc_ns", Kind: Int, Group: Cost, Default: -1, Min: -1, Max: 100 * ms, Unit: "ns",
		Doc: "override: refill work after moving to another LLC of the socket; -1 = from the cache model (min(wss, L3) fetched at line_cross_llc_ns)"},
	MigrateCrossSocketNS: {Name: "migrate_cross_socket_ns", Kind: Int, Group: Cost, Default: -1, Min: -1, Max: 100 * ms, Unit: "ns",
		Doc: "override: refill work after moving to the other socket; -1 = from the cache model (min(wss, L3) fetched at line_cross_socket_ns)"},
	LBBaseNS: {Name: "lb_base_ns", Kind: Int, Group: Cost, Default: 1 * us, Min: 0, Max: 10 * ms, Unit: "ns",
		Doc: "fixed CPU time of one load_balance pass"},
	LBCPUNS: {Name: "lb_cpu_ns", Kind: Int, Group: Cost, Default: 25, Min: 0, Max: 100 * us, Unit: "ns",
		Doc: "CPU time per CPU whose statistics one load_balance pass reads"},
	SRQLockNS: {Name: "srq_lock_ns", Kind: Int, Group: Cost, Default: 150, Min: 0, Max: 100 * us, Unit: "ns",
		Doc: "SHARED_RUNQ: how long one push or pop holds its shard's spinlock (lock line transfer plus list update); waiters spin and pay the wait"},
	IPISendNS: {Name: "ipi_send_ns", Kind: Int, Group: Cost, Default: 300, Min: 0, Max: 1 * ms, Unit: "ns",
		Doc: "waker CPU time to send a reschedule IPI (smp_send_reschedule: x2APIC ICR write); not paid for an idle target that waits with polling set (POLL, MWAIT: set_nr_and_not_polling)"},
	EnqueueNS: {Name: "enqueue_ns", Kind: Int, Group: Cost, Default: 500, Min: 0, Max: 1 * ms, Unit: "ns",
		Doc: "ttwu_do_activate (enqueue_task_fair, PELT update, check_preempt_curr): paid by the waker for a same-LLC target, by the target in scheduler_ipi for a queued cross-LLC wakeup"},
	LineSMTNS: {Name: "line_smt_ns", Kind: Int, Group: Cost, Default: 10, Min: 0, Max: 100 * us, Unit: "ns",
		Doc: "moving a written cache line between SMT siblings (shared L1/L2)"},
	LineLLCNS: {Name: "line_llc_ns", Kind: Int, Group: Cost, Default: 60, Min: 0, Max: 100 * us, Unit: "ns",
		Doc: "moving a written cache line between two cores of one LLC (core-to-core latency)"},
	LineCrossLLCNS: {Name: "line_cross_llc_ns", Kind: Int, Group: Cost, Default: 100, Min: 0, Max: 100 * us, Unit: "ns",
		Doc: "moving a written cache line between two LLCs of one socket (AMD CCX to CCX)"},
	LineCrossSocketNS: {Name: "line_cross_socket_ns", Kind: Int, Group: Cost, Default: 150, Min: 0, Max: 100 * us, Unit: "ns",
		Doc: "moving a written cache line to the other socket"},
	L3HitNS: {Name: "l3_hit_ns", Kind: Int, Group: Cost, Default: 18, Min: 0, Max: 100 * us, Unit: "ns",
		Doc: "reading a clean line from the shared LLC (the refill of a task that changed core, and a probe of a runqueue line nobody rewrote since it was last read)"},
	TimerSlackNS: {Name: "timer_slack_ns", Kind: Int, Group: Tunable, Default: 50 * us, Min: 0, Max: 100 * ms, Unit: "ns",
		Doc: "hrtimer slack of a timed sleep (SCHED_OTHER default): it fires this much after the requested time, or earlier at a timer interrupt (tick, another timer) on its CPU in between"},
	EraKnob: {Name: "era", Kind: Enum, Group: Model, Default: int64(Era52), Max: int64(numEras) - 1, Values: eraNames,
		Doc: "the kernel simulated as a whole — its pick/preempt/placement class, wakeup path, load balancer and features.h defaults: 5.2 (CFS, 2019), 2.6-o1 (the O(1) scheduler of 2004), 6.6 (EEVDF), 6.1 (CFS with the v6.x wakeup path and balancer, Debian 12); knobs an era did not have are refused"},
	BASE_SLICE: {Name: "BASE_SLICE", Kind: Bool, Group: Feature, Default: 1, Max: 1,
		Doc: "sched_slice is at least sched_min_granularity_ns (\"sched/fair: Limit sched slice duration\", v6.0) — kernel, era 6.1 only (replaced by EEVDF's slices in v6.6)"},
}

func init() {
	for i := range table {
		table[i].ID = ID(i)
		if table[i].Kind == Bool {
			table[i].Max = 1
		}
		if table[i].Name == "" {
			panic("knob table: row without a name")
		}
	}
}
