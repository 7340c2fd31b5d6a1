package main

import (
	"encoding/csv"
	"io"
	"strconv"

	"schedplay/scenario"
)

// runCSVHeader is the header of `run --format csv`: one row per run and
// workload (the run-wide figures repeat on each of its workloads' rows).
// machine is the machine simulated (a --machine-file's own name), preset
// what the command line named it by.
var runCSVHeader = []string{"preset", "machine", "seed", "duration_s", "workload", "kind", "tasks",
	"p50_us", "p75_us", "p90_us", "p95_us", "p99_us", "p99_5_us", "p99_9_us", "min_us", "max_us", "samples",
	"throughput_ops_s", "completion_s", "probes_mean", "probes_per_wakeup", "placed_busy_pct", "cpu_busy_pct"}

func writeRunCSV(w io.Writer, rs []*scenario.Result) {
	cw := csv.NewWriter(w)
	cw.Write(runCSVHeader)
	for _, r := range rs {
		for _, wl := range r.Workloads {
			l := wl.WakeupLatencyUS
			i := func(v int64) string { return strconv.FormatInt(v, 10) }
			cw.Write([]string{r.Preset, r.Machine, strconv.FormatUint(r.Seed, 10), fnum(r.DurationS), wl.Name, wl.Kind, strconv.Itoa(wl.Tasks),
				i(l.P50), i(l.P75), i(l.P90), i(l.P95), i(l.P99), i(l.P995), i(l.P999), i(l.Min), i(l.Max), i(l.Count),
				optnum(wl.ThroughputOpsS), optnum(wl.CompletionS),
				fnum(r.Search.ProbesMean), fnum(r.Search.ProbesPerWakeup), fnum(r.Search.PlacedBusyPct), fnum(r.CPUBusyPct)})
		}
	}
	cw.Flush()
}

// fnum prints a float in the shortest form that reads back exactly.
func fnum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// optnum is fnum, or empty for a missing value.
func optnum(p *float64) string {
	if p == nil {
		return ""
	}
	return fnum(*p)
}

func writeCompareCSV(w io.Writer, rows []CompareRow) {
	cw := csv.NewWriter(w)
	cw.Write([]string{"metric", "a_mean", "a_stdev", "b_mean", "b_stdev", "diff", "change_pct", "p_welch", "significant"})
	for _, r := range rows {
		cw.Write([]string{r.Metric, fnum(r.AMean), fnum(r.ASd), fnum(r.BMean), fnum(r.BSd), fnum(r.Diff),
			optnum(r.ChangePct), optnum(r.P), strconv.FormatBool(r.Significant)})
	}
	cw.Flush()
}

func writeMergeCSV(w io.Writer, rows []mergeRow) {
	cw := csv.NewWriter(w)
	cw.Write([]string{"point", "metric", "n", "mean", "stdev", "ci95"})
	for _, r := range rows {
		ci := ""
		if r.CI95 == r.CI95 { // not NaN
			ci = fnum(r.CI95)
		}
		cw.Write([]string{r.Point, r.Metric, strconv.Itoa(r.N), fnum(r.Mean), fnum(r.Stdev), ci})
	}
	cw.Flush()
}
