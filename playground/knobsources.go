package playground

import (
	"strings"

	"schedplay/engine/knob"
)

// Where each knob comes from, for the knobs whose one-line doc in the
// knob table does not name it itself ("what — source"). The page shows
// every knob with its explanation and its source.
var knobSources = map[string]string{
	"SIS_UTIL":                     "Linux v6.0, \"sched/fair: Introduce SIS_UTIL to search idle CPU based on sum of util_avg\" (Chen Yu, 2022)",
	"SRQ_LLC_SHARD":                "the SHARED_RUNQ v3 series (David Vernet, Aug 2023) and K Prateek Nayak's tests in its review",
	"NUMA_BALANCING":               "automatic NUMA balancing, Linux v3.8+ (kernel.numa_balancing; task_numa_fault in kernel/sched/fair.c)",
	"LB_PERIODIC":                  "Linux v5.2 kernel/sched/fair.c: rebalance_domains and nohz_idle_balance",
	"LB_NEWIDLE":                   "Linux v5.2 kernel/sched/fair.c: idle_balance (newidle_balance from v5.6)",
	"IDLE_STATES":                  "the cpuidle framework (drivers/cpuidle); each machine's idle states and exit times in presets/CALIBRATION.md",
	"cpuidle_governor":             "drivers/cpuidle/governors/menu.c and teo.c (teo new in Linux v5.1)",
	"max_cstate":                   "the intel_idle.max_cstate and processor.max_cstate boot parameters (Documentation/admin-guide/kernel-parameters.txt)",
	"pm_qos_latency_us":            "PM QoS CPU latency requests via /dev/cpu_dma_latency (Documentation/power/pm_qos_interface.rst)",
	"sched_tunable_scaling":        "sysctl kernel.sched_tunable_scaling (get_update_sysctl_factor in kernel/sched/fair.c)",
	"hz":                           "CONFIG_HZ (kernel/Kconfig.hz); the RHEL/Oracle Linux server kernels of the 2019 measurements",
	"per_cpu_gain":                 "the 2004 SMT-nice patch (smt-nice-2004; Linux 2.6.8-rc2-mm1)",
	"shard_size":                   "the SHARED_RUNQ v3 series (David Vernet, Aug 2023): SHARED_RUNQ_SHARD_SZ",
	"numa_balancing_scan_delay_ms": "sysctl kernel.numa_balancing_scan_delay_ms (kernel/sched/fair.c, default 1000)",
	"min_timeslice_ms":             "Linux 2.6.7 kernel/sched.c: MIN_TIMESLICE (task_timeslice, the O(1) scheduler)",
	"max_timeslice_ms":             "Linux 2.6.7 kernel/sched.c: MAX_TIMESLICE (task_timeslice, the O(1) scheduler)",
	"starvation_limit_ms":          "Linux 2.6.7 kernel/sched.c: STARVATION_LIMIT and EXPIRED_STARVING",
	"era":                          "this playground: one whole kernel per era (Linux v5.2 kernel/sched/fair.c; 2.6.7 kernel/sched.c; v6.6 kernel/sched/fair.c with EEVDF)",
	"RT_RUNTIME_SHARE":             "kernel/sched/features.h and rt.c do_balance_runtime (Linux v5.2: on; off by default from v5.17)",
	"sched_rt_period_us":           "sysctl kernel.sched_rt_period_us (kernel/sched/rt.c def_rt_bandwidth, default 1000000)",
	"sched_rt_runtime_us":          "sysctl kernel.sched_rt_runtime_us (kernel/sched/rt.c sched_rt_runtime_exceeded, default 950000)",
	"sched_rr_timeslice_ms":        "sysctl kernel.sched_rr_timeslice_ms (kernel/sched/rt.c task_tick_rt, RR_TIMESLICE = 100 ms)",
	"timer_slack_ns":               "the default timer slack of a SCHED_OTHER task, 50 µs (init_task.timer_slack_ns, prctl PR_SET_TIMERSLACK)",
}

// costSource is the source of the cost knobs (probe_ns, ipi_ns, line_*,
// migrate_*, …): each machine preset sets them from its calibration.
const costSource = "calibrated per machine: each machine preset's costs, from the measurements and estimates in presets/CALIBRATION.md (wakeup costs, contended cache lines, caches)"

// KnobSource returns where knob d comes from: the part of its doc after
// " — ", or this package's table.
func KnobSource(d *knob.Def) string {
	if i := strings.LastIndex(d.Doc, " — "); i >= 0 {
		return d.Doc[i+len(" — "):]
	}
	if s, ok := knobSources[d.Name]; ok {
		return s
	}
	if d.Group == knob.Cost {
		return costSource
	}
	return ""
}
