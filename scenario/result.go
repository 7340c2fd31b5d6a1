package scenario

import (
	"fmt"
	"math"
	"strings"

	"schedplay/engine"
	"schedplay/engine/histo"
)

// Result is the outcome of one run; its JSON field names are the contract
// of `schedsim run --format json` (contracts.md).
type Result struct {
	Preset    string         `json:"preset"`
	Machine   string         `json:"machine"`
	Seed      uint64         `json:"seed"`
	Runs      int            `json:"runs"`
	DurationS float64        `json:"duration_s"`
	Knobs     map[string]any `json:"knobs"`
	// Policy names the wake policy that replaced steps of the era's own
	// (absent: none), and PolicyHooks those steps (select_idle_sibling,
	// select_idle_cpu, select_idle_core, newidle_balance).
	Policy      string                 `json:"policy,omitempty"`
	PolicyHooks []string               `json:"policy_hooks,omitempty"`
	Workloads   []WorkloadOut          `json:"workloads"`
	Search      SearchOut              `json:"search"`
	Migrations  MigrationsOut          `json:"migrations"`
	Balance     engine.BalanceStats    `json:"balance"`
	SharedRunq  engine.SharedRunqStats `json:"shared_runq"`
	// Hardware is the layer under the scheduler: idle-state residency,
	// IPIs and polling wakeups, cache refills after migrations.
	Hardware engine.HardwareStats `json:"hardware"`
	// Delayed counts era 6.12's delayed dequeues (absent in other eras).
	Delayed *engine.DelayedStats `json:"delayed_dequeue,omitempty"`
	// RT counts the RT class's pushes, pulls and throttling (absent
	// without SCHED_FIFO/SCHED_RR tasks).
	RT *engine.RTStats `json:"rt,omitempty"`
	// DL is the deadline class: its CPU share, bandwidth, pushes, pulls,
	// throttling and each deadline task's reservation and what it got
	// (absent when the engine built no deadline class).
	DL         *engine.DLStats `json:"dl,omitempty"`
	CPUBusyPct float64         `json:"cpu_busy_pct"`
	PerCPUBusy []float64       `json:"cpu_busy_pct_per_cpu"`
	Events     int64           `json:"events"`
	SimWallS   float64         `json:"sim_wall_s"`
	// Warnings are what a reader of the numbers must know, one sentence
	// each: a workload that measures wakeup (or request) latency but
	// recorded no sample (its summary is all zeros, not a latency of 0).
	// The command line prints them on stderr too.
	Warnings []string `json:"warnings,omitempty"`
}

// WorkloadOut is one workload's metrics.
type WorkloadOut struct {
	Name            string        `json:"name"`
	Kind            string        `json:"kind"`
	Tasks           int           `json:"tasks"`
	WakeupLatencyUS histo.Summary `json:"wakeup_latency_us"`
	// RequestLatencyUS is the workload's own request latency (ping-pong
	// round trips, schbench RPS requests), when it records one.
	RequestLatencyUS *histo.Summary `json:"request_latency_us,omitempty"`
	// ThroughputOpsS is completed operations per simulated second (null
	// when the workload counts none); CompletionS the time it finished
	// (null when it did not finish or never finishes).
	ThroughputOpsS *float64 `json:"throughput_ops_s"`
	CompletionS    *float64 `json:"completion_s"`
	// WakeupBands is the wakeup-latency distribution at the percentiles
	// the schbench generations print (BandPercentiles), each with the
	// samples in its band, for `--format schbench`; not in the JSON.
	WakeupBands []Band `json:"-"`
	// Threads are the per-thread records of a workload whose threads
	// measure their own cycles (cyclictest), in thread order.
	Threads []ThreadOut `json:"threads,omitempty"`
	// RTTasks counts its SCHED_FIFO/SCHED_RR tasks (absent: none).
	RTTasks int `json:"rt_tasks,omitempty"`
	// DLTasks counts its SCHED_DEADLINE tasks (absent: none).
	DLTasks int `json:"dl_tasks,omitempty"`
}

// ThreadOut is one periodic thread's own latency record, in µs as
// cyclictest prints it.
type ThreadOut struct {
	Name       string  `json:"name"`
	TID        int     `json:"tid"`
	Policy     string  `json:"policy"`
	RTPrio     int     `json:"rt_priority"`
	CPU        int     `json:"cpu"`
	IntervalUS int64   `json:"interval_us"`
	Cycles     int64   `json:"cycles"`
	MinUS      int64   `json:"min_us"`
	ActUS      int64   `json:"act_us"`
	AvgUS      float64 `json:"avg_us"`
	MaxUS      int64   `json:"max_us"`
}

// Band is one percentile of a latency distribution: its value and the
// samples at most that value (the difference between two bands is what
// schbench since 2021 prints as "(N samples)").
type Band struct {
	P     float64
	Value int64
	Below int64
}

// BandPercentiles are the percentiles of WakeupBands: the union of the
// 2016–2020 list (50 75 90 95 99 99.5 99.9) and the 2023 one (20 50 90 99
// 99.9).
var BandPercentiles = []float64{20, 50, 75, 90, 95, 99, 99.5, 99.9}

// Bands reads h at BandPercentiles.
func Bands(h *histo.Latency) []Band {
	if h == nil || h.Count() == 0 {
		return nil
	}
	out := make([]Band, len(BandPercentiles))
	for i, p := range BandPercentiles {
		v := h.Percentile(p)
		out[i] = Band{P: p, Value: v, Below: h.CountAtOrBelow(v)}
	}
	return out
}

// SearchOut is the idle-search summary.
type SearchOut struct {
	Wakeups            int64            `json:"wakeups"`
	SelectIdleCPUCalls int64            `json:"select_idle_cpu_calls"`
	ProbesMean         float64          `json:"probes_mean"`
	ProbesMax          int64            `json:"probes_max"`
	FoundIdlePct       float64          `json:"found_idle_pct"`
	PlacedBusyPct      float64          `json:"placed_busy_pct"`
	ProbesPerWakeup    float64          `json:"probes_per_wakeup"`
	CutShort           int64            `json:"sis_prop_cut_short"`
	SearchTimeUS       float64          `json:"search_time_us"`
	IdleCoreCleared    int64            `json:"has_idle_cores_cleared"`
	StageCalls         map[string]int64 `json:"stage_calls"`
	ProbesHist         []int64          `json:"probes_hist"`
	// PlacementCV is the coefficient of variation of per-CPU placements
	// made by select_idle_cpu (lower = wakeups spread more evenly).
	PlacementCV float64 `json:"select_idle_cpu_placement_cv"`
}

// MigrationsOut counts migrations by distance.
type MigrationsOut = engine.MigrationStats

// Summarize reads a finished simulation into a Result. wallS is the wall
// time the run took (the only number that differs between identical runs).
func Summarize(c *Config, sim *engine.Sim, wallS float64) *Result {
	dur := float64(sim.Now()) / float64(engine.Second)
	r := &Result{
		Preset: c.Preset, Machine: sim.Topology().Spec.Name, Seed: c.Seed, Runs: 1,
		DurationS: dur, Knobs: sim.Knobs().Map(), Events: sim.Events(), SimWallS: round(wallS, 3),
		Migrations: sim.Migrations(), Balance: sim.Balance(), SharedRunq: sim.SharedRunq(),
		Hardware: sim.Hardware(), Delayed: sim.Delayed(), RT: sim.RT(), DL: sim.DL(),
	}
	for i := range r.Hardware.IdleStates {
		r.Hardware.IdleStates[i].ResidencyPct = round(r.Hardware.IdleStates[i].ResidencyPct, 2)
	}
	if d := r.DL; d != nil {
		d.CPUPct, d.TotalBW, d.LimitBW = round(d.CPUPct, 2), round(d.TotalBW, 4), round(d.LimitBW, 4)
		for i := range d.Tasks {
			d.Tasks[i].Reserved, d.Tasks[i].Share = round(d.Tasks[i].Reserved, 4), round(d.Tasks[i].Share, 4)
		}
	}
	if r.Preset == "" {
		r.Preset = r.Machine
	}
	if c.WakePolicy != nil {
		r.Policy, r.PolicyHooks = c.WakePolicy.Name(), sim.PolicyHooks().Names()
	}
	for i, w := range sim.Workloads() {
		wo := WorkloadOut{Name: w.Name, Kind: w.Kind, Tasks: w.Tasks, WakeupLatencyUS: w.WakeupLatency, RTTasks: w.RTTasks, DLTasks: w.DLTasks}
		if w.Kind == "schbench" {
			wo.WakeupBands = Bands(sim.WakeupHistogram(i))
		}
		wo.WakeupLatencyUS.Mean = round(wo.WakeupLatencyUS.Mean, 2)
		if w.RequestLatency.Count > 0 {
			rl := w.RequestLatency
			rl.Mean = round(rl.Mean, 2)
			wo.RequestLatencyUS = &rl
		}
		// A finished finite workload's rate is over its own run, not the
		// whole run's (an endless one beside it may have held the run
		// open after it finished).
		span := dur
		if w.DoneAt >= 0 {
			span = float64(w.DoneAt) / float64(engine.Second)
		}
		if w.Ops > 0 && span > 0 {
			v := round(float64(w.Ops)/span, 3)
			wo.ThroughputOpsS = &v
		}
		if w.DoneAt >= 0 {
			v := float64(w.DoneAt) / float64(engine.Second)
			wo.CompletionS = &v
		}
		for _, th := range w.Threads {
			us := func(ns int64) int64 { return ns / engine.Microsecond }
			avg := 0.0
			if th.Cycles > 0 {
				avg = round(float64(th.SumNS)/float64(th.Cycles)/float64(engine.Microsecond), 2)
			}
			wo.Threads = append(wo.Threads, ThreadOut{
				Name: th.Name, TID: int(th.Task), Policy: th.Policy.String(), RTPrio: th.RTPrio, CPU: th.CPU,
				IntervalUS: us(th.IntervalNS), Cycles: th.Cycles, MinUS: us(th.MinNS), ActUS: us(th.ActNS), AvgUS: avg, MaxUS: us(th.MaxNS),
			})
		}
		r.Workloads = append(r.Workloads, wo)
		r.Warnings = append(r.Warnings, noSampleWarnings(c, w, dur, sim.AllFinished())...)
	}
	s := sim.Search()
	r.Search = SearchOut{
		Wakeups: s.Wakeups, SelectIdleCPUCalls: s.SelectIdleCPUCalls, ProbesMean: round(s.ProbesMean, 3),
		ProbesMax: s.ProbesMax, FoundIdlePct: round(s.FoundIdlePct, 2), PlacedBusyPct: round(s.PlacedBusyPct, 2),
		ProbesPerWakeup: round(s.ProbesPerWakeup, 3), CutShort: s.CutShort,
		SearchTimeUS: round(float64(s.SearchTimeNS)/1000, 3), IdleCoreCleared: s.IdleCoreCleared,
		StageCalls: s.StageCalls, ProbesHist: s.ProbesHist, PlacementCV: round(sim.SISPlacementCV(), 4),
	}
	busy := sim.CPUBusyPct()
	total := 0.0
	for i, b := range busy {
		busy[i] = round(b, 2)
		total += b
	}
	r.PerCPUBusy = busy
	if len(busy) > 0 {
		r.CPUBusyPct = round(total/float64(len(busy)), 2)
	}
	return r
}

// noSampleWarnings warns of each metric of w that recorded no sample in a
// run of dur simulated seconds.
func noSampleWarnings(c *Config, w engine.WorkloadResult, dur float64, finished bool) []string {
	var out []string
	why := fmt.Sprintf("in the %.6g s simulated", dur)
	if want := float64(c.Duration) / float64(engine.Second); c.Duration > 0 && dur < want {
		why = fmt.Sprintf("the run ended at %.6g s of %.6g s", dur, want)
		if finished {
			why += ", when every finite workload had finished"
		}
	}
	for _, m := range []struct {
		on     bool
		count  int64
		metric string
	}{
		{w.MeasuresWakeups, w.WakeupLatency.Count, "wakeup_latency_us"},
		{w.MeasuresRequests, w.RequestLatency.Count, "request_latency_us"},
	} {
		if m.on && m.count == 0 {
			out = append(out, fmt.Sprintf("workload %s recorded no %s samples (%s); its %s summary is empty, not a latency of 0", w.Name, strings.ReplaceAll(strings.TrimSuffix(m.metric, "_us"), "_", " "), why, m.metric))
		}
	}
	return out
}

// round keeps n decimals so JSON output is short and stable.
func round(x float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(x*p) / p
}
