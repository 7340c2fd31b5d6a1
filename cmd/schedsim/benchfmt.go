package main

// The benchmark output formats: `--format schbench|hackbench|perf-bench`
// print what the real tool prints, on the stream it prints it to, so the
// scripts that parse the real tools read schedplay's runs unchanged. Only
// the layouts are reproduced (from the tools' sources, cited per layout
// and in testdata/golden/*.txt); no code is taken from them.

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"schedplay/engine/field"
	"schedplay/engine/histo"
	"schedplay/engine/workload"
	"schedplay/scenario"
)

// Bench formats and the workload kinds each one fits.
var benchFormatKinds = map[string][]string{
	"schbench":   {"schbench"},
	"hackbench":  {"hackbench"},
	"perf-bench": {"hackbench", "pipe"},
	"cyclictest": {"cyclictest"},
	// cyclictest-json is cyclictest's --json=FILE (rt-tests' rt-utils.c
	// rt_write_json), which parsers such as Linaro test-definitions'
	// automated/lib/parse_rt_tests_results.py read.
	"cyclictest-json": {"cyclictest"},
}

// schbenchLayouts are the --schbench-layout values: the generations of
// schbench's percentile printout.
var schbenchLayouts = []string{"2016", "2019", "2023"}

// runFormats lists run's --format values.
var runFormats = []string{"text", "json", "csv", "schbench", "hackbench", "perf-bench", "cyclictest", "cyclictest-json"}

// checkBenchFormat refuses a bench format none of the workloads fits, and
// a --schbench-layout that is not one of schbenchLayouts.
func checkBenchFormat(format, layout string, specs []string) error {
	if !slices.Contains(schbenchLayouts, layout) {
		return usagef("--schbench-layout %q not allowed (allowed: %s)", layout, strings.Join(schbenchLayouts, ", "))
	}
	kinds, ok := benchFormatKinds[format]
	if !ok {
		return nil
	}
	var have []string
	for _, w := range specs {
		sp, err := workload.Parse(w)
		if err != nil {
			continue // reported by config
		}
		for _, k := range kinds {
			if sp.Kind == k {
				return nil
			}
		}
		have = append(have, sp.Kind)
	}
	got := "no workload"
	if len(have) > 0 {
		got = "workloads " + strings.Join(have, ", ")
	}
	what := map[string]string{
		"schbench":        "schbench's output needs a schbench workload",
		"hackbench":       "hackbench's output needs a hackbench workload",
		"perf-bench":      "perf bench sched output needs a hackbench (sched messaging) or pipe (sched pipe) workload",
		"cyclictest":      "cyclictest's output needs a cyclictest workload",
		"cyclictest-json": "cyclictest's --json output needs a cyclictest workload",
	}[format]
	return usagef("--format %s does not fit this run: %s (got %s); use --format text or json, or add e.g. --workload %s",
		format, what, got, kinds[0])
}

// benchStreams are where a real tool prints: its stdout and its stderr.
// With --out both go to the file.
type benchStreams struct{ out, err io.Writer }

// specInt is an integer key of a workload spec as the run used it (the
// spec's value or the kind's default), read with the one value parser.
func specInt(sp workload.Spec, key string) int64 {
	k, _ := workload.Lookup(sp.Kind)
	val := ""
	for _, kk := range k.AllKeys() {
		if kk.Name == key {
			val = kk.Default
		}
	}
	for _, p := range sp.Params {
		if p.Key == key {
			val = p.Value
		}
	}
	v, err := field.Int("workload key "+key, val, math.MinInt64, math.MaxInt64)
	if err != nil {
		return 0
	}
	return v
}

// writeBench prints one run in a bench format. label, when not empty,
// heads the run's block (--runs N); it goes where the block goes.
func writeBench(s benchStreams, format, layout string, specs []string, r *scenario.Result, label string) error {
	var missing []string
	for i, w := range r.Workloads {
		if i >= len(specs) {
			break
		}
		sp, err := workload.Parse(specs[i])
		if err != nil {
			return err
		}
		fits := false
		for _, k := range benchFormatKinds[format] {
			fits = fits || sp.Kind == k
		}
		if !fits {
			continue
		}
		switch format {
		case "schbench":
			if label != "" {
				fmt.Fprintf(s.err, "%s\n", label)
			}
			writeSchbenchLayout(s, layout, sp, w, r.DurationS)
		case "cyclictest":
			if label != "" {
				fmt.Fprintf(s.out, "%s\n", label)
			}
			writeCyclictest(s.out, w, specInt(sp, "latency"))
		case "cyclictest-json":
			if err := writeCyclictestJSON(s.out, specs[i], w, r); err != nil {
				return err
			}
		case "hackbench", "perf-bench":
			if w.CompletionS == nil {
				missing = append(missing, w.Name)
				continue
			}
			if label != "" {
				fmt.Fprintf(s.out, "%s\n", label)
			}
			if format == "hackbench" {
				writeHackbench(s.out, sp, *w.CompletionS)
			} else {
				writePerfBench(s.out, sp, *w.CompletionS)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s did not finish within the %.6g s simulated (seed %d), so there is no time to print; give a longer --duration or a smaller workload",
			strings.Join(missing, ", "), r.DurationS, r.Seed)
	}
	return nil
}

// runLabel heads run i of n in a bench format, e.g. "# run 2/5 seed 8".
func runLabel(i, n int, seed uint64) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf("# run %d/%d seed %d", i+1, n, seed)
}

// writeSchbenchLayout prints a schbench workload's results in one of the
// percentile layouts:
//
//   - 2016: schbench.c of 2016-04 .. 2019-08 (show_latencies, "%2.4fth"):
//     "Latency percentiles (usec)", 50.0000th … *99.0000th … 99.9000th,
//     "\tmin=N, max=N", on stderr; pipe mode's "avg worker transfer" and
//     RPS mode's "rps: … p95 (usec) …" lines on stdout.
//   - 2019: the same after commit 3faa8b0 (2019-08-20, "%2.1fth"): 50.0th.
//   - 2023: schbench.c since 2023-04 (show_latencies with a label, per-band
//     sample counts, "* 99.0th", commit ab22f3f "consistently use stderr"):
//     Wakeup, Request and RPS blocks and "average rps", or in pipe mode the
//     wakeup block with the 20th percentile and "avg worker transfer", all
//     on stderr.
func writeSchbenchLayout(s benchStreams, layout string, sp workload.Spec, w scenario.WorkloadOut, durS float64) {
	pipe := specInt(sp, "p")
	rps := specInt(sp, "R")
	cputime := specInt(sp, "c")
	if pipe > 0 && !hasKey(sp, "c") {
		cputime = 0
	}
	m, t := max(specInt(sp, "m"), 1), max(specInt(sp, "t"), 1)
	opsS := 0.0
	if w.ThroughputOpsS != nil {
		opsS = *w.ThroughputOpsS
	}
	l := w.WakeupLatencyUS
	if layout == "2023" {
		runtime := int64(durS) // schbench prints whole seconds (%llu)
		if pipe > 0 {
			writeBands2023(s.err, "Wakeup Latencies", "usec", runtime, l.Count, w.WakeupBands, []float64{20, 50, 90, 99, 99.9}, 99, l.Min, l.Max)
			// loops_per_sec = loops / summed worker runtime: per worker.
			perWorker := opsS / float64(m*t)
			v, unit := prettySize(opsS * float64(pipe))
			fmt.Fprintf(s.err, "avg worker transfer: %.2f ops/sec %.2f%s/s\n", perWorker, v, unit)
			return
		}
		writeBands2023(s.err, "Wakeup Latencies", "usec", runtime, l.Count, w.WakeupBands, []float64{50, 90, 99, 99.9}, 99, l.Min, l.Max)
		// The 2016–2020 generation the simulator models records no
		// request latency outside RPS mode: schbench then prints an
		// empty block, its min/max line alone (zeroed stats).
		var rl histo.Summary
		if w.RequestLatencyUS != nil {
			rl = *w.RequestLatencyUS
		}
		writeBands2023(s.err, "Request Latencies", "usec", runtime, rl.Count, summaryBands(rl), []float64{50, 90, 99, 99.9}, 99, rl.Min, rl.Max)
		// The RPS distribution is one sample: the run's mean rate.
		r := int64(opsS)
		one := []scenario.Band{{P: 20, Value: r, Below: 1}, {P: 50, Value: r, Below: 1}, {P: 90, Value: r, Below: 1}}
		writeBands2023(s.err, "RPS", "requests", runtime, 1, one, []float64{20, 50, 90}, 50, r, r)
		if durS > 0 {
			fmt.Fprintf(s.err, "average rps: %.2f\n", opsS)
		}
		return
	}
	if l.Count > 0 {
		pfmt := "\t%s%2.1fth: %d\n"
		if layout == "2016" {
			pfmt = "\t%s%2.4fth: %d\n"
		}
		fmt.Fprintln(s.err, "Latency percentiles (usec)")
		for _, row := range []struct {
			p float64
			v int64
		}{{50, l.P50}, {75, l.P75}, {90, l.P90}, {95, l.P95}, {99, l.P99}, {99.5, l.P995}, {99.9, l.P999}} {
			star := ""
			if row.p == 99 {
				star = "*"
			}
			fmt.Fprintf(s.err, pfmt, star, row.p, row.v)
		}
	}
	fmt.Fprintf(s.err, "\tmin=%d, max=%d\n", l.Min, l.Max)
	if pipe > 0 {
		// loops_per_sec summed over message threads, then divided by them.
		perThread := opsS / float64(m)
		v, unit := prettySize(perThread * float64(pipe))
		fmt.Fprintf(s.out, "avg worker transfer: %.2f ops/sec %.2f%s/s\n", perThread, v, unit)
	}
	if rps > 0 {
		fmt.Fprintf(s.out, "rps: %.2f p95 (usec) %d p99 (usec) %d p95/cputime %s%% p99/cputime %s%%\n",
			opsS, l.P95, l.P99, cPercent(l.P95, cputime), cPercent(l.P99, cputime))
	}
}

func hasKey(sp workload.Spec, key string) bool {
	for _, p := range sp.Params {
		if p.Key == key {
			return true
		}
	}
	return false
}

// cPercent is 100·v/cputime as C's "%.2f" prints it (inf when cputime is 0).
func cPercent(v, cputime int64) string {
	if cputime == 0 {
		if v == 0 {
			return "-nan"
		}
		return "inf"
	}
	return fmt.Sprintf("%.2f", float64(v)/float64(cputime)*100)
}

// writeBands2023 prints one show_latencies block of the 2023 layout: the
// percentiles in want (star on the one equal to star) with their band
// counts relative to the previous percentile of the same list (bands
// holds cumulative counts at every computed percentile).
func writeBands2023(w io.Writer, label, units string, runtime, total int64, bands []scenario.Band, want []float64, star float64, mn, mx int64) {
	if total > 0 && len(bands) > 0 {
		fmt.Fprintf(w, "%s percentiles (%s) runtime %d (s) (%d total samples)\n", label, units, runtime, total)
		// schbench computes the band counts over its whole list (20 50
		// 90 99 99.9) and prints the masked ones.
		full := []float64{20, 50, 90, 99, 99.9}
		prev := int64(0)
		for _, p := range full {
			b, ok := bandAt(bands, p)
			if !ok {
				continue
			}
			n := b.Below - prev
			prev = b.Below
			if !containsF(want, p) {
				continue
			}
			mark := "  "
			if p == star {
				mark = "* "
			}
			fmt.Fprintf(w, "\t%s%2.1fth: %-10d (%d samples)\n", mark, p, b.Value, n)
		}
	}
	fmt.Fprintf(w, "\t  min=%d, max=%d\n", mn, mx)
}

func bandAt(bands []scenario.Band, p float64) (scenario.Band, bool) {
	for _, b := range bands {
		if b.P == p {
			return b, true
		}
	}
	return scenario.Band{}, false
}

func containsF(xs []float64, x float64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// summaryBands turns a summary (no histogram kept) into bands whose
// counts are the nominal share of each percentile step: an estimate,
// used for the request-latency block of the 2023 layout.
func summaryBands(l histo.Summary) []scenario.Band {
	at := map[float64]int64{50: l.P50, 90: l.P90, 99: l.P99, 99.9: l.P999}
	var out []scenario.Band
	for _, p := range []float64{20, 50, 90, 99, 99.9} {
		v, ok := at[p]
		if !ok {
			continue
		}
		out = append(out, scenario.Band{P: p, Value: v, Below: int64(math.Round(float64(l.Count) * p / 100))})
	}
	return out
}

// prettySize scales bytes by 1024 into B, KB, MB, … as schbench's
// pretty_size does.
func prettySize(n float64) (float64, string) {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	i := 0
	for n >= 1024 && i+1 < len(units) {
		n /= 1024
		i++
	}
	return n, units[i]
}

// cTime prints seconds as "%lu.%03lu" of tv_sec and tv_usec/1000
// (truncated, as the tools do).
func cTime(s float64) string {
	us := int64(math.Round(s * 1e6))
	return fmt.Sprintf("%d.%03d", us/1_000_000, us%1_000_000/1000)
}

// writeHackbench prints rt-tests hackbench's output (src/hackbench/
// hackbench.c: the two header printfs and "Time: %lu.%03lu").
func writeHackbench(w io.Writer, sp workload.Spec, doneS float64) {
	g, f := specInt(sp, "g"), specInt(sp, "f")
	mode := "process"
	if specInt(sp, "T") == 1 {
		mode = "threaded"
	}
	fmt.Fprintf(w, "Running in %s mode with %d groups using %d file descriptors each (== %d tasks)\n", mode, g, 2*f, g*2*f)
	fmt.Fprintf(w, "Each sender will pass %d messages of %d bytes\n", specInt(sp, "l"), specInt(sp, "s"))
	fmt.Fprintf(w, "Time: %s\n", cTime(doneS))
}

// writePerfBench prints `perf bench sched messaging` (hackbench kind) or
// `perf bench sched pipe` (pipe kind) in perf's default format
// (tools/perf/bench/sched-messaging.c, sched-pipe.c, and the
// "# Running '%s/%s' benchmark:" line of builtin-bench.c).
func writePerfBench(w io.Writer, sp workload.Spec, doneS float64) {
	who := "processes"
	if specInt(sp, "T") == 1 {
		who = "threads"
	}
	switch sp.Kind {
	case "hackbench":
		g, f := specInt(sp, "g"), specInt(sp, "f")
		fmt.Fprintf(w, "# Running 'sched/messaging' benchmark:\n")
		fmt.Fprintf(w, "# %d sender and receiver %s per group\n", f, who)
		fmt.Fprintf(w, "# %d groups == %d %s run\n\n", g, g*2*f, who)
		fmt.Fprintf(w, " %14s: %s [sec]\n", "Total time", cTime(doneS))
	case "pipe":
		loops := specInt(sp, "l")
		us := math.Round(doneS * 1e6)
		fmt.Fprintf(w, "# Running 'sched/pipe' benchmark:\n")
		fmt.Fprintf(w, "# Executed %d pipe operations between two %s\n\n", loops, who)
		fmt.Fprintf(w, " %14s: %s [sec]\n\n", "Total time", cTime(doneS))
		fmt.Fprintf(w, " %14f usecs/op\n", us/float64(loops))
		ops := 0
		if us > 0 {
			ops = int(float64(loops) / (us / 1e6))
		}
		fmt.Fprintf(w, " %14d ops/sec\n", ops)
	}
}
