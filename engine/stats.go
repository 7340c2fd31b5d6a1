package engine

import (
	"math"
	"slices"

	"schedplay/engine/knob"

	"schedplay/engine/histo"
	"schedplay/engine/machine"
)

// maxProbeBucket bounds the probes-per-call distribution; larger counts
// land in the last bucket.
const maxProbeBucket = 1024

// Stats accumulates what the engine measures about its own decisions.
type Stats struct {
	wakeups      int64
	ticks        int64 // tick events dispatched (Totals.Ticks)
	stageCalls   [numStages]int64
	placedBusy   int64
	searchCostNS int64
	probesTotal  int64

	sisCalls     int64
	sisProbes    int64
	sisProbesMax int64
	sisFound     int64
	sisCutShort  int64
	sisProbeHist []int64 // index = probes in one select_idle_cpu call

	idleCoreCleared int64
	migrations      [5]int64 // by machine.Distance
	ctxSwitches     int64
	wakeLatNS       int64
	wakeLatCount    int64

	lbCalls        int64
	lbMoved        int64
	lbHotSkipped   int64
	activeBalances int64
	o1Expiries     int64 // era 2.6-o1: timeslices run out

	srqPushes, srqPops         int64
	srqLockAcq, srqLockWaitNS  int64
	srqLockHoldNS              int64
	srqContended, srqLineXfers int64
	srqHeadBlocked             int64
	numaMigrations, numaSwaps  int64

	// Placements made by select_idle_cpu, per CPU (spread of the search).
	sisPlacements []int64

	// The hardware layer.
	idleEntries     []int64 // per registered idle state: selections
	idleResidencyNS []int64 // per registered idle state: time spent
	pinnedWakeups   int64   // wakeups of single-CPU tasks (no select_task_rq_fair)
	ipisSent        int64   // reschedule IPIs sent by wakers
	pollWakeups     int64   // wakeups of idle CPUs by the store alone (POLL, MWAIT: no IPI)
	queuedWakeups   int64   // TTWU_QUEUE wakeups (cross-LLC, via wake_list)
	ipiSaved        int64   // wake_list adds riding on an IPI already sent
	stackedWakeups  int64   // chosen idle, no longer idle at the enqueue (the race window)
	// Era 6.12's delayed dequeue: sleeps it delayed, delayed tasks the
	// pick dequeued, and delayed tasks the balancer moved.
	delayedDequeues, delayedFlushed, delayedMigrated int64
	newidleSkipped                                   int64    // NI_RANDOM: newly idle levels the dice skipped
	refillNS                                         [5]int64 // cache refill work owed after migrations, by distance
}

func (st *Stats) init(ncpu int) {
	st.sisProbeHist = make([]int64, 0, 64)
	st.sisPlacements = make([]int64, ncpu)
}

func (st *Stats) recordDecision(d *Decision) {
	st.wakeups++
	st.stageCalls[d.Stage]++
	if !d.ChosenIdle {
		st.placedBusy++
	}
	st.searchCostNS += d.Cost
	st.probesTotal += int64(len(d.Probes))
	if d.SISCalled {
		st.sisCalls++
		n := int64(d.SISProbes)
		st.sisProbes += n
		st.sisProbesMax = max(st.sisProbesMax, n)
		b := int(min(n, maxProbeBucket))
		for len(st.sisProbeHist) <= b {
			st.sisProbeHist = append(st.sisProbeHist, 0)
		}
		st.sisProbeHist[b]++
		if d.SISCutShort {
			st.sisCutShort++
		}
		if d.Stage == StageIdleCPU {
			st.sisFound++
			st.sisPlacements[d.Chosen]++
		}
	}
}

// SearchStats summarises the idle search.
type SearchStats struct {
	Wakeups            int64            `json:"wakeups"`
	StageCalls         map[string]int64 `json:"stage_calls"`
	SelectIdleCPUCalls int64            `json:"select_idle_cpu_calls"`
	ProbesMean         float64          `json:"probes_mean"`
	ProbesMax          int64            `json:"probes_max"`
	ProbesHist         []int64          `json:"probes_hist"`
	FoundIdlePct       float64          `json:"found_idle_pct"`
	PlacedBusyPct      float64          `json:"placed_busy_pct"`
	CutShort           int64            `json:"cut_short"`
	ProbesPerWakeup    float64          `json:"probes_per_wakeup"`
	SearchTimeNS       int64            `json:"search_time_ns"`
	IdleCoreCleared    int64            `json:"has_idle_cores_cleared"`
}

// Search returns the idle-search statistics so far. ProbesMean, ProbesMax
// and ProbesHist describe the CPUs probed per select_idle_cpu call.
func (s *Sim) Search() SearchStats {
	st := &s.stats
	out := SearchStats{
		Wakeups: st.wakeups, SelectIdleCPUCalls: st.sisCalls, ProbesMax: st.sisProbesMax,
		CutShort: st.sisCutShort, SearchTimeNS: st.searchCostNS, IdleCoreCleared: st.idleCoreCleared,
		StageCalls: map[string]int64{},
		ProbesHist: append([]int64(nil), st.sisProbeHist...),
	}
	hasDelayed, _ := knob.Exists(knob.DELAY_DEQUEUE, s.k.Era())
	for i, n := range st.stageCalls {
		if Stage(i) == StageDelayed && !hasDelayed {
			continue // a stage only era 6.12 has
		}
		if (Stage(i) == StageRTPrev || Stage(i) == StageRTLowest) && s.rt == nil {
			continue // stages of the RT class, in runs with RT tasks
		}
		if (Stage(i) == StageDLPrev || Stage(i) == StageDLLater) && s.dl == nil {
			continue // stages of the deadline class, in runs with deadline tasks
		}
		if Stage(i) == StagePolicy && s.phooks&(HookSelectIdleSibling|HookSelectIdleCPU|HookSelectIdleCore) == 0 {
			continue // a wake policy's own stage, in runs with a wakeup hook
		}
		out.StageCalls[Stage(i).String()] = n
	}
	if st.sisCalls > 0 {
		out.ProbesMean = float64(st.sisProbes) / float64(st.sisCalls)
		out.FoundIdlePct = 100 * float64(st.sisFound) / float64(st.sisCalls)
	}
	if st.wakeups > 0 {
		out.PlacedBusyPct = 100 * float64(st.placedBusy) / float64(st.wakeups)
		out.ProbesPerWakeup = float64(st.probesTotal) / float64(st.wakeups)
	}
	return out
}

// SISPlacementCV measures how evenly select_idle_cpu spreads its
// placements over the CPUs it can choose from: the coefficient of variation
// (stdev/mean) of the per-CPU placement counts within each LLC (the search
// never leaves one), averaged over the LLCs weighted by their placements.
// 0 is a perfectly even spread; higher means some CPUs are "victimized".
// -1 when it placed nothing.
func (s *Sim) SISPlacementCV() float64 {
	total, weighted := 0.0, 0.0
	for llc := 0; llc < s.topo.NLLC; llc++ {
		span := s.topo.LLCSpan[llc]
		var xs []float64
		sum := 0.0
		for c := span.First(); c >= 0; c = span.Next(c + 1) {
			x := float64(s.stats.sisPlacements[c])
			xs = append(xs, x)
			sum += x
		}
		if sum == 0 {
			continue
		}
		mean := sum / float64(len(xs))
		ss := 0.0
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		cv := math.Sqrt(ss/float64(len(xs))) / mean
		weighted += cv * sum
		total += sum
	}
	if total == 0 {
		return -1
	}
	return weighted / total
}

// SISPlacements returns, per CPU, how many wakeups select_idle_cpu placed
// there.
func (s *Sim) SISPlacements() []int64 { return append([]int64(nil), s.stats.sisPlacements...) }

// MigrationStats counts task moves (a task starting to run on another CPU
// than it last ran on) by distance.
type MigrationStats struct {
	SMT         int64 `json:"smt"`
	LLC         int64 `json:"llc"`
	CrossLLC    int64 `json:"cross_llc"`
	CrossSocket int64 `json:"cross_socket"`
}

// Migrations returns the migration counts.
func (s *Sim) Migrations() MigrationStats {
	m := s.stats.migrations
	return MigrationStats{SMT: m[machine.SameCore], LLC: m[machine.SameLLC], CrossLLC: m[machine.SameSocket], CrossSocket: m[machine.CrossSocket]}
}

// BalanceStats describes load-balancer activity.
type BalanceStats struct {
	Calls          int64 `json:"calls"`
	Moved          int64 `json:"moved"`
	HotSkipped     int64 `json:"hot_skipped"`
	ActiveBalances int64 `json:"active_balances"`
	CtxSwitches    int64 `json:"ctx_switches"`
	// Era 6.6 only: balance passes that found an imbalance, and tasks
	// they detached, by migration type (migrate_load, migrate_util,
	// migrate_task).
	ImbLoad   int64 `json:"imb_migrate_load,omitempty"`
	ImbUtil   int64 `json:"imb_migrate_util,omitempty"`
	ImbTask   int64 `json:"imb_migrate_task,omitempty"`
	MovedLoad int64 `json:"moved_migrate_load,omitempty"`
	MovedUtil int64 `json:"moved_migrate_util,omitempty"`
	MovedTask int64 `json:"moved_migrate_task,omitempty"`
	// NUMA balancing (task_numa_migrate): tasks moved to their memory's
	// node (migrate_task_to) and pairs swapped (migrate_swap).
	NUMAMoves int64 `json:"numa_moves"`
	NUMASwaps int64 `json:"numa_swaps"`
	// NewidleSkipped counts the levels of newly idle balances that
	// NI_RANDOM's dice skipped (era 6.12).
	NewidleSkipped int64 `json:"newidle_skipped,omitempty"`
}

// Balance returns load-balancer counters.
func (s *Sim) Balance() BalanceStats {
	st := &s.stats
	m := &s.lb.s66
	return BalanceStats{Calls: st.lbCalls, Moved: st.lbMoved, HotSkipped: st.lbHotSkipped, ActiveBalances: st.activeBalances, CtxSwitches: st.ctxSwitches,
		ImbLoad: m.imb[migrateLoad], ImbUtil: m.imb[migrateUtil], ImbTask: m.imb[migrateTask],
		MovedLoad: m.moved[migrateLoad], MovedUtil: m.moved[migrateUtil], MovedTask: m.moved[migrateTask],
		NUMAMoves: st.numaMigrations, NUMASwaps: st.numaSwaps, NewidleSkipped: st.newidleSkipped}
}

// CPUBusyPct returns each CPU's busy time as a percentage of elapsed time.
func (s *Sim) CPUBusyPct() []float64 {
	out := make([]float64, len(s.cpus))
	if s.now == 0 {
		return out
	}
	for i, c := range s.cpus {
		c.account(s.now)
		out[i] = 100 * float64(c.busyNS) / float64(s.now)
	}
	return out
}

// CPUTimes returns each CPU's busy and idle nanoseconds so far.
func (s *Sim) CPUTimes() (busy, idle []int64) {
	busy = make([]int64, len(s.cpus))
	idle = make([]int64, len(s.cpus))
	for i, c := range s.cpus {
		c.account(s.now)
		busy[i], idle[i] = c.busyNS, c.idleNS
	}
	return busy, idle
}

// WorkloadResult is what one workload measured.
type WorkloadResult struct {
	Name           string
	Kind           string
	WakeupLatency  histo.Summary
	RequestLatency histo.Summary
	Ops            int64
	DoneAt         int64 // -1 when not finished
	Tasks          int
	// MeasuresWakeups says the workload has tasks that record their
	// wakeup latencies (its WakeupLatency is its metric, or one of them).
	MeasuresWakeups bool
	// MeasuresRequests says the workload's request latency is its metric
	// (SetMeasuresRequests).
	MeasuresRequests bool
	// Threads are the records of its tasks that measure their own cycles
	// (Ctx.RecordCycle: cyclictest), in task order; nil when none do.
	Threads []CycleStats
	// RTTasks counts its SCHED_FIFO/SCHED_RR tasks, DLTasks its
	// SCHED_DEADLINE ones.
	RTTasks int
	DLTasks int
}

// Workloads returns each workload's measurements so far.
func (s *Sim) Workloads() []WorkloadResult {
	out := make([]WorkloadResult, len(s.workloads))
	for i, w := range s.workloads {
		out[i] = WorkloadResult{
			Name: w.name, Kind: w.kind, WakeupLatency: w.wakeLat.Summarize(),
			RequestLatency: w.reqLat.Summarize(), Ops: w.ops, DoneAt: w.doneAt, Tasks: len(w.tasks),
			MeasuresWakeups: w.measuresWake, MeasuresRequests: w.measuresReq,
		}
		for _, id := range w.tasks {
			if s.tasks[id].dl() {
				out[i].DLTasks++
			}
			if s.tasks[id].rtPolicy() {
				out[i].RTTasks++
			}
		}
		for _, id := range w.cycleTasks {
			out[i].Threads = append(out[i].Threads, *s.tasks[id].cycles)
		}
		slices.SortFunc(out[i].Threads, func(a, b CycleStats) int { return int(a.Task - b.Task) })
	}
	return out
}

// WakeupHistogram returns workload i's wakeup-latency histogram (live; do
// not modify).
func (s *Sim) WakeupHistogram(i int) *histo.Latency { return s.workloads[i].wakeLat }

// HardwareStats describes the hardware layer under the scheduler: where
// idle CPUs slept, how wakeups reached them, and what migrations cost in
// cache refills.
type HardwareStats struct {
	IdleStates []IdleStateStats `json:"idle_states"`
	// PinnedWakeups are wakeups of tasks allowed on one CPU, which never
	// enter select_task_rq_fair.
	PinnedWakeups int64 `json:"pinned_wakeups"`
	IPIsSent      int64 `json:"ipis_sent"`
	// PollWakeups reached an idle CPU waiting with polling set (POLL or
	// MWAIT) by the store to its need_resched flag, without an IPI.
	PollWakeups int64 `json:"poll_wakeups"`
	// QueuedWakeups went through a remote wake_list (TTWU_QUEUE);
	// IPIsSaved of them found the list non-empty and sent no IPI.
	QueuedWakeups int64 `json:"queued_wakeups"`
	IPIsSaved     int64 `json:"ipis_saved"`
	// StackedWakeups chose a CPU that was idle at the decision and was no
	// longer idle when the waker reached its enqueue (another wakeup, a
	// pull or a timer took it in between): v5.2's idle_cpu() race.
	StackedWakeups int64 `json:"stacked_wakeups"`
	// CacheRefillUS is the refill work owed after migrations, by distance.
	CacheRefillUS MigrationStats `json:"cache_refill_us"`
}

// DelayedStats counts era 6.12's delayed dequeues (DELAY_DEQUEUE,
// eevdf612.go): Delayed sleeps stayed queued; of those, Requeued were woken
// while still queued (ttwu_runnable: no select_task_rq, the
// delayed_requeue stage) and Dequeued were dequeued by a pick; Migrated
// counts moves of a delayed task by the balancer or an affinity change.
type DelayedStats struct {
	Delayed  int64 `json:"delayed"`
	Requeued int64 `json:"requeued"`
	Dequeued int64 `json:"dequeued"`
	Migrated int64 `json:"migrated"`
}

// Delayed returns the delayed-dequeue counters, nil in an era without
// DELAY_DEQUEUE.
func (s *Sim) Delayed() *DelayedStats {
	if ok, _ := knob.Exists(knob.DELAY_DEQUEUE, s.k.Era()); !ok {
		return nil
	}
	st := &s.stats
	return &DelayedStats{Delayed: st.delayedDequeues, Requeued: st.stageCalls[StageDelayed],
		Dequeued: st.delayedFlushed, Migrated: st.delayedMigrated}
}

// IdleStateStats is one idle state's usage.
type IdleStateStats struct {
	Name string `json:"name"`
	// Entries is how often a governor chose it; ResidencyPct the share of
	// all CPU time spent in it.
	Entries      int64   `json:"entries"`
	ResidencyPct float64 `json:"residency_pct"`
}

// Hardware returns the hardware-layer counters so far.
func (s *Sim) Hardware() HardwareStats {
	st := &s.stats
	out := HardwareStats{PinnedWakeups: st.pinnedWakeups, IPIsSent: st.ipisSent, PollWakeups: st.pollWakeups,
		QueuedWakeups: st.queuedWakeups, IPIsSaved: st.ipiSaved, StackedWakeups: st.stackedWakeups}
	total := float64(s.now) * float64(len(s.cpus))
	for i, st2 := range s.idleStates {
		res := st.idleResidencyNS[i]
		// Time in the current selection counts too.
		for _, c := range s.cpus {
			if c.curr == nil && c.cstate == i && !c.reflected {
				res += s.now - c.stateEntered
			}
		}
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(res) / total
		}
		out.IdleStates = append(out.IdleStates, IdleStateStats{Name: st2.Name, Entries: st.idleEntries[i], ResidencyPct: pct})
	}
	r := st.refillNS
	out.CacheRefillUS = MigrationStats{SMT: r[machine.SameCore] / Microsecond, LLC: r[machine.SameLLC] / Microsecond,
		CrossLLC: r[machine.SameSocket] / Microsecond, CrossSocket: r[machine.CrossSocket] / Microsecond}
	return out
}
