package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"schedplay/engine"
	"schedplay/engine/histo"
	"schedplay/engine/knob"
	"schedplay/scenario"
)

func writeText(w io.Writer, cfg scenario.Config, r *scenario.Result) {
	fmt.Fprintf(w, "preset %s (machine %s), seed %d, %.3gs simulated, %d events, %.3gs wall\n",
		r.Preset, r.Machine, r.Seed, r.DurationS, r.Events, r.SimWallS)
	writeKnobDiff(w, r.Knobs)
	if r.Policy != "" {
		fmt.Fprintf(w, "wake policy %s, in place of the era's %s\n", r.Policy, strings.Join(r.PolicyHooks, ", "))
	}
	for _, wl := range r.Workloads {
		switch {
		case wl.RTTasks > 0 && wl.DLTasks > 0:
			fmt.Fprintf(w, "\nworkload %s (%d tasks, %d of them SCHED_FIFO/SCHED_RR, %d SCHED_DEADLINE)\n", wl.Name, wl.Tasks, wl.RTTasks, wl.DLTasks)
		case wl.RTTasks > 0:
			fmt.Fprintf(w, "\nworkload %s (%d tasks, %d of them SCHED_FIFO/SCHED_RR)\n", wl.Name, wl.Tasks, wl.RTTasks)
		case wl.DLTasks > 0:
			fmt.Fprintf(w, "\nworkload %s (%d tasks, %d of them SCHED_DEADLINE)\n", wl.Name, wl.Tasks, wl.DLTasks)
		default:
			fmt.Fprintf(w, "\nworkload %s (%d tasks)\n", wl.Name, wl.Tasks)
		}
		l := wl.WakeupLatencyUS
		fmt.Fprintf(w, "  wakeup latency (usec): p50 %d  p75 %d  p90 %d  p95 %d  *p99 %d  p99.5 %d  p99.9 %d  min %d  max %d  (%d samples)\n",
			l.P50, l.P75, l.P90, l.P95, l.P99, l.P995, l.P999, l.Min, l.Max, l.Count)
		if wl.ThroughputOpsS != nil {
			fmt.Fprintf(w, "  throughput: %.1f ops/s\n", *wl.ThroughputOpsS)
		}
		if wl.CompletionS != nil {
			fmt.Fprintf(w, "  completed at %.4f s\n", *wl.CompletionS)
		}
	}
	s := r.Search
	fmt.Fprintf(w, "\nidle search: %d wakeups, %.2f CPUs probed per wakeup, %.1f us of search time\n", s.Wakeups, s.ProbesPerWakeup, s.SearchTimeUS)
	fmt.Fprintf(w, "  select_idle_cpu: %d calls, probes/call mean %.2f max %d, found idle %.1f%%, cut short by nr %d\n",
		s.SelectIdleCPUCalls, s.ProbesMean, s.ProbesMax, s.FoundIdlePct, s.CutShort)
	fmt.Fprintf(w, "  placed on a busy CPU: %.2f%%; has_idle_cores cleared %d times\n", s.PlacedBusyPct, s.IdleCoreCleared)
	fmt.Fprintf(w, "  chosen by: %s\n", stageLine(s.StageCalls))
	m := r.Migrations
	fmt.Fprintf(w, "migrations: smt %d, llc %d, cross_llc %d, cross_socket %d\n", m.SMT, m.LLC, m.CrossLLC, m.CrossSocket)
	h := r.Hardware
	cr := h.CacheRefillUS
	fmt.Fprintf(w, "  cache refill after them (usec): smt %d, llc %d, cross_llc %d, cross_socket %d\n", cr.SMT, cr.LLC, cr.CrossLLC, cr.CrossSocket)
	var idle []string
	for _, st := range h.IdleStates {
		idle = append(idle, fmt.Sprintf("%s %.1f%% (%d entries)", st.Name, st.ResidencyPct, st.Entries))
	}
	fmt.Fprintf(w, "idle states (share of all CPU time): %s\n", strings.Join(idle, ", "))
	fmt.Fprintf(w, "wakeup delivery: %d IPIs sent, %d idle CPUs woken without one (POLL or MWAIT: the store to need_resched), %d via wake_list (%d rode on an earlier IPI), %d pinned wakeups (no select_task_rq_fair)\n",
		h.IPIsSent, h.PollWakeups, h.QueuedWakeups, h.IPIsSaved, h.PinnedWakeups)
	fmt.Fprintf(w, "  stacked: %d wakeups chose an idle CPU that was taken by the time they enqueued (the idle_cpu() race window)\n", h.StackedWakeups)
	if dd := r.Delayed; dd != nil {
		fmt.Fprintf(w, "delayed dequeue: %d sleeps stayed queued; %d woken there (requeued, no select_task_rq), %d dequeued by a pick, %d moved while delayed\n",
			dd.Delayed, dd.Requeued, dd.Dequeued, dd.Migrated)
	}
	if rt := r.RT; rt != nil {
		fmt.Fprintf(w, "rt class: %.2f%% of CPU time in RT tasks; %d pushes, %d pulls; throttled %d times\n",
			rt.CPUPct, rt.Pushes, rt.Pulls, rt.Throttles)
	}
	if dl := r.DL; dl != nil {
		writeDL(w, dl, r.Workloads)
	}
	b := r.Balance
	fmt.Fprintf(w, "load balance: %d passes, %d tasks moved, %d active balances; %d context switches\n", b.Calls, b.Moved, b.ActiveBalances, b.CtxSwitches)
	if b.NewidleSkipped > 0 {
		fmt.Fprintf(w, "  newly idle levels skipped by NI_RANDOM: %d\n", b.NewidleSkipped)
	}
	if b.NUMAMoves+b.NUMASwaps > 0 {
		fmt.Fprintf(w, "  NUMA balancing: %d tasks moved to their memory's node, %d pairs swapped\n", b.NUMAMoves, b.NUMASwaps)
	}
	if b.ImbLoad+b.ImbUtil+b.ImbTask > 0 {
		fmt.Fprintf(w, "  by migration type (imbalances found / tasks moved): load %d/%d, util %d/%d, task %d/%d\n",
			b.ImbLoad, b.MovedLoad, b.ImbUtil, b.MovedUtil, b.ImbTask, b.MovedTask)
	}
	fmt.Fprintf(w, "cpu busy: %.2f%% (mean over CPUs)\n", r.CPUBusyPct)
}

func stageLine(m map[string]int64) string {
	var parts []string
	total := int64(0)
	for _, v := range m {
		total += v
	}
	for _, name := range stageOrder() {
		if v := m[name]; v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%.1f%%)", name, v, 100*float64(v)/float64(max(total, 1))))
		}
	}
	if len(parts) == 0 {
		return "(no wakeups)"
	}
	return strings.Join(parts, ", ")
}

func stageOrder() []string {
	return engine.StageNames()
}

// writeKnobDiff lists the knobs that differ from the run's era's defaults
// (the table's for 5.2); knobs the era does not have are left out.
func writeKnobDiff(w io.Writer, m map[string]any) {
	era := knob.Era52
	if s, ok := m["era"].(string); ok {
		if e, err := knob.ParseEra(s); err == nil {
			era = e
		}
	}
	var diffs []string
	for _, d := range knob.Table() {
		v, ok := m[d.Name]
		if !ok {
			continue
		}
		if exists, _ := knob.Exists(d.ID, era); !exists {
			continue
		}
		def := d.Format(knob.DefaultIn(d.ID, era))
		got := fmt.Sprint(v)
		if got != def {
			diffs = append(diffs, d.Name+"="+got)
		}
	}
	sort.Strings(diffs)
	what := "table defaults"
	if era != knob.Era52 {
		what = "era " + era.String() + " defaults"
	}
	if len(diffs) == 0 {
		fmt.Fprintf(w, "knobs: all at %s\n", what)
		return
	}
	fmt.Fprintf(w, "knobs not at %s (machine costs and --set): %s\n", what, strings.Join(diffs, " "))
}

// writeTextMulti prints a table in the style of the seeds: metric, mean,
// stdev, %stdev.
func writeTextMulti(w io.Writer, cfg scenario.Config, rs []*scenario.Result) {
	fmt.Fprintf(w, "preset %s, %d runs (seeds %d..%d), %.3gs simulated each\n", rs[0].Preset, len(rs), rs[0].Seed, rs[len(rs)-1].Seed, rs[0].DurationS)
	writeKnobDiff(w, rs[0].Knobs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, get func(r *scenario.Result) float64) {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = get(r)
		}
		mean, sd := scenario.MeanStdev(xs)
		pct := 0.0
		if mean != 0 {
			pct = 100 * sd / mean
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t\n", name, mean, sd, pct)
	}
	for wi, wl := range rs[0].Workloads {
		fmt.Fprintf(w, "\nworkload %s\n", wl.Name)
		fmt.Fprintf(tw, "metric\tmean\tstdev\t%%stdev\t\n")
		lat := func(f func(s histo.Summary) int64) func(r *scenario.Result) float64 {
			return func(r *scenario.Result) float64 { return float64(f(r.Workloads[wi].WakeupLatencyUS)) }
		}
		row("p50 (usec)", lat(func(s histo.Summary) int64 { return s.P50 }))
		row("p75", lat(func(s histo.Summary) int64 { return s.P75 }))
		row("p90", lat(func(s histo.Summary) int64 { return s.P90 }))
		row("p95", lat(func(s histo.Summary) int64 { return s.P95 }))
		row("p99", lat(func(s histo.Summary) int64 { return s.P99 }))
		row("p99.5", lat(func(s histo.Summary) int64 { return s.P995 }))
		row("p99.9", lat(func(s histo.Summary) int64 { return s.P999 }))
		if wl.ThroughputOpsS != nil {
			row("ops/s", func(r *scenario.Result) float64 {
				if v := r.Workloads[wi].ThroughputOpsS; v != nil {
					return *v
				}
				return 0
			})
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	fmt.Fprintf(tw, "metric\tmean\tstdev\t%%stdev\t\n")
	row("probes/select_idle_cpu", func(r *scenario.Result) float64 { return r.Search.ProbesMean })
	row("probes/wakeup", func(r *scenario.Result) float64 { return r.Search.ProbesPerWakeup })
	row("placed busy %", func(r *scenario.Result) float64 { return r.Search.PlacedBusyPct })
	row("cpu busy %", func(r *scenario.Result) float64 { return r.CPUBusyPct })
	tw.Flush()
}

// writeDL is the deadline class's line, in the rt class line's style,
// then one line per deadline task: its reservation, the bandwidth that
// reserves, the share of a CPU it got, its jobs, deadline misses and
// throttles.
func writeDL(w io.Writer, dl *engine.DLStats, wls []scenario.WorkloadOut) {
	limit := "no admission limit (sched_rt_runtime_us -1)"
	if dl.LimitBW >= 0 {
		limit = fmt.Sprintf("limit %.2f", dl.LimitBW)
	}
	fmt.Fprintf(w, "dl class: %.2f%% of CPU time in deadline tasks; %.2f CPUs reserved, %s; %d pushes, %d pulls; throttled %d times\n",
		dl.CPUPct, dl.TotalBW, limit, dl.Pushes, dl.Pulls, dl.Throttles)
	for _, t := range dl.Tasks {
		reclaim := "off"
		if t.Reclaim {
			reclaim = "on"
		}
		name := t.Name
		if len(wls) > 1 && t.Workload >= 0 && t.Workload < len(wls) {
			name += " (" + wls[t.Workload].Name + ")"
		}
		fmt.Fprintf(w, "  %s: runtime/deadline/period %s/%s/%s, reclaim %s; reserved %.1f%%, got %.1f%% of a CPU; %d jobs, %d deadline misses, %d throttles\n",
			name, dlDuration(t.RuntimeNS), dlDuration(t.DeadlineNS), dlDuration(t.PeriodNS), reclaim,
			100*t.Reserved, 100*t.Share, t.Jobs, t.Misses, t.Throttles)
	}
}

// dlDuration writes a reservation's time in ms when it is whole
// milliseconds or longer than 10 ms, else in us.
func dlDuration(ns int64) string {
	switch {
	case ns%engine.Millisecond == 0 || ns >= 10*engine.Millisecond:
		return strconv.FormatFloat(float64(ns)/float64(engine.Millisecond), 'f', -1, 64) + "ms"
	case ns%engine.Microsecond == 0:
		return strconv.FormatInt(ns/engine.Microsecond, 10) + "us"
	}
	return strconv.FormatFloat(float64(ns)/float64(engine.Microsecond), 'f', -1, 64) + "us"
}
