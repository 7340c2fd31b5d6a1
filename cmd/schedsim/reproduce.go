package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	json "github.com/goccy/go-json"

	"schedplay/experiment"
	"schedplay/presets"
	"schedplay/scenario"
)

// runExperiment runs one validation experiment (tests replace it).
var runExperiment = experiment.Run

type reproduceFlags struct {
	asJSON, quick, verbose, force, noWall bool
	out                                   string
}

func reproduceFlagSet(f *reproduceFlags) *flag.FlagSet {
	fs := newFlagSet("reproduce")
	fs.BoolVar(&f.asJSON, "json", false, "print the outcomes as JSON")
	fs.BoolVar(&f.quick, "quick", false, "reduced duration and seeds (each experiment's \"quick\" size), as make test runs it")
	fs.BoolVar(&f.verbose, "v", false, "report progress on stderr")
	fs.StringVar(&f.out, "out", "", "write the output to `FILE` instead of stdout (whole or not at all)")
	fs.BoolVar(&f.force, "force", false, "replace an existing --out file")
	fs.BoolVar(&f.noWall, "no-wall-time", false, "leave out each experiment's wall time so identical runs give byte-identical output")
	return fs
}

// cmdReproduce runs the validation experiments and prints, per row, the
// seed figure beside the simulated one, then PASS/FAIL per check. A check
// that fails, unless its experiment is a known_fail, makes exit status 1.
func cmdReproduce(args []string, stdout, stderr io.Writer) error {
	var f reproduceFlags
	fs := reproduceFlagSet(&f)
	if err := parseFlags(fs, args, stdout, true); err != nil {
		return err
	}
	var exps []*presets.Experiment
	if fs.NArg() == 0 {
		exps = presets.Experiments()
	}
	for _, t := range fs.Args() {
		found := false
		for _, e := range presets.Experiments() {
			if strings.EqualFold(e.Name, t) || strings.EqualFold(e.Target, t) {
				exps = append(exps, e)
				found = true
			}
		}
		if !found {
			var names []string
			for _, e := range presets.Experiments() {
				names = append(names, e.Target+" ("+e.Name+")")
			}
			return usagef("reproduce: unknown TARGET %q (valid: %s)", t, strings.Join(names, ", "))
		}
	}
	if len(exps) == 0 {
		return fmt.Errorf("no experiment presets are embedded")
	}
	out := &output{flag: "--out", path: f.out}
	if err := openOutputs(f.force, nil, out); err != nil {
		return err
	}
	defer out.abort()
	dst := newSink(stdout, out)
	var outs []*experiment.Outcome
	var failed []string
	for _, e := range exps {
		size := presets.Size{}
		if f.quick {
			size = e.Quick
		}
		start := time.Now()
		var progress func(string)
		if f.verbose {
			progress = func(s string) { fmt.Fprintln(stderr, s) }
		}
		o, err := runExperiment(e, size, progress)
		if err != nil {
			return fmt.Errorf("%s: %v", e.Target, err)
		}
		if !o.Pass && o.KnownFail == "" {
			failed = append(failed, o.Target)
		}
		outs = append(outs, o)
		if !f.asJSON {
			took := time.Since(start)
			if f.noWall {
				took = -1
			}
			writeOutcome(dst, o, took)
			dst.flushStdout() // each outcome as it comes, on a terminal
		}
	}
	if f.asJSON {
		b, err := json.MarshalIndent(outs, "", "  ")
		if err != nil {
			return err
		}
		dst.Write(append(b, '\n'))
	}
	if err := dst.finish(f.force); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d targets failed: %s", len(failed), len(outs), strings.Join(failed, ", "))
	}
	return nil
}

// writeOutcome prints one experiment's rows and checks; took < 0 leaves
// its wall time out (--no-wall-time).
func writeOutcome(w io.Writer, o *experiment.Outcome, took time.Duration) {
	wall := ""
	if took >= 0 {
		wall = fmt.Sprintf(" (%.1fs wall)", took.Seconds())
	}
	fmt.Fprintf(w, "%s\n  source: %s\n  %d seeds × %.3g s per arm%s\n", o.Title, o.Source, o.Seeds, o.DurationS, wall)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  \trow\tseed\tsimulated (mean ± sd)\t\n")
	for _, r := range o.Rows {
		seed := "—"
		if r.Seed != nil {
			seed = fmt.Sprintf("%g", *r.Seed)
		}
		sim := fmt.Sprintf("%s ± %s", num(r.Mean), num(r.Stdev))
		if r.Err != "" {
			sim = "n/a: " + r.Err
		}
		fmt.Fprintf(tw, "  \t%s\t%s\t%s\t\n", r.Label, seed, sim)
	}
	tw.Flush()
	for _, c := range o.Checks {
		verdict := "PASS"
		if !c.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s  [%s]\n", verdict, c.Rule, c.Detail)
		if c.KnownAtSize != "" {
			fmt.Fprintf(w, "        known at this reduced size, holds at full size:\n%s", wrap(c.KnownAtSize, "        ", 96))
		}
	}
	switch {
	case o.Pass:
		fmt.Fprintf(w, "  => %s PASS\n\n", o.Target)
	case o.KnownFail != "":
		fmt.Fprintf(w, "  => %s FAIL — known_fail, does not fail reproduce. Diagnosis:\n%s\n", o.Target, wrap(o.KnownFail, "     ", 96))
	default:
		fmt.Fprintf(w, "  => %s FAIL\n\n", o.Target)
	}
}

// wrap breaks text into lines of at most width runes, each with indent.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if len([]rune(line))+len([]rune(word)) > width && line != indent {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}

func num(x float64) string {
	switch {
	case x == math.Trunc(x) && math.Abs(x) < 1e9:
		return fmt.Sprintf("%.0f", x)
	case math.Abs(x) >= 100:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

func compareFlagSet(f *runFlags, a, b *string) *flag.FlagSet {
	fs := newFlagSet("compare")
	f.addCommon(fs)
	fs.StringVar(a, "a", "", "arm A's knob settings `KNOB=V,KNOB=V` (empty: defaults); policy=FILE.star runs a wake policy")
	fs.StringVar(b, "b", "", "arm B's knob settings `KNOB=V,KNOB=V`; policy=FILE.star runs a wake policy")
	f.durationVar(fs, "simulated `TIME` per run, e.g. 500ms or 2s (at most 1h; default 10s, or an rt-app file's global.duration)")
	fs.IntVar(&f.runs, "runs", 5, "`N` seeds per arm")
	fs.StringVar(&f.format, "format", "text", "output `FORMAT`: text, json or csv")
	return fs
}

// cmdCompare runs one workload under two knob sets on the same seeds and
// prints, in the style of the seeds' tables, metric, A mean ± stdev,
// B mean ± stdev and % change.
func cmdCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cooperative.Store(true) // a signal stops the runs; nothing is written
	defer cooperative.Store(false)
	var f runFlags
	var a, b string
	if err := parseFlags(compareFlagSet(&f, &a, &b), args, stdout, false); err != nil {
		return err
	}
	if f.format != "text" && f.format != "json" && f.format != "csv" {
		return usagef("--format %q not allowed (allowed: text, json, csv)", f.format)
	}
	base, err := f.config()
	if err != nil {
		return err
	}
	arm := func(flagName, spec string) (scenario.Config, error) {
		c := base
		c.Knobs = append([]string(nil), base.Knobs...)
		for _, kv := range strings.Split(spec, ",") {
			if kv = strings.TrimSpace(kv); kv == "" {
				continue
			}
			if path, ok := strings.CutPrefix(kv, "policy="); ok {
				// policy=FILE: the arm's wake policy (run --policy).
				if c.WakePolicy != nil {
					return c, usagef("%s %q: policy= given twice", flagName, spec)
				}
				prog, err := loadPolicy(path)
				if err != nil {
					return c, usagef("%s: %v", flagName, err)
				}
				c.WakePolicy = prog
				f.inputs = append(f.inputs, input{flag: flagName, path: path})
				continue
			}
			if _, err := scenario.KnobValues(f.spec, []string{kv}); err != nil {
				return c, usagef("%s %q: %v", flagName, kv, err)
			}
			c.Knobs = append(c.Knobs, kv)
		}
		if _, _, err := c.Check(); err != nil {
			return c, usagef("%s %q: %v", flagName, spec, err)
		}
		if _, err := f.build(c); err != nil {
			return c, err
		}
		return c, nil
	}
	ca, err := arm("--a", a)
	if err != nil {
		return err
	}
	cb, err := arm("--b", b)
	if err != nil {
		return err
	}
	out := &output{flag: "--out", path: f.out}
	if err := openOutputs(f.force, f.inputs, out); err != nil {
		return err
	}
	defer out.abort()
	interrupted := &interruptedError{"interrupted before the comparison finished; no output written"}
	ra, err := scenario.RunManyContext(ctx, ca, f.runs)
	if errors.Is(err, scenario.ErrInterrupted) {
		return interrupted
	} else if err != nil {
		return err
	}
	rb, err := scenario.RunManyContext(ctx, cb, f.runs)
	if errors.Is(err, scenario.ErrInterrupted) {
		return interrupted
	} else if err != nil {
		return err
	}
	dst := newSink(stdout, out)
	rows := compareRows(ra, rb)
	if f.format == "csv" {
		writeCompareCSV(dst, rows)
		return dst.finish(f.force)
	}
	if f.format == "json" {
		res := map[string]any{"preset": ra[0].Preset, "a": a, "b": b, "runs": f.runs, "seed": f.seed, "rows": rows}
		bs, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		dst.Write(append(bs, '\n'))
		return dst.finish(f.force)
	}
	fmt.Fprintf(dst, "preset %s, %d seeds (%d..%d), %.3gs each\nA: %s\nB: %s\n\n", ra[0].Preset, f.runs, f.seed, f.seed+uint64(f.runs)-1,
		ra[0].DurationS, orDefaults(a), orDefaults(b))
	tw := tabwriter.NewWriter(dst, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "metric\tA mean\t± sd\tB mean\t± sd\tB−A\tchange\tp (Welch)\t\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Metric, num(r.AMean), num(r.ASd), num(r.BMean), num(r.BSd),
			signed(r.Diff), changeText(r), pText(r))
	}
	tw.Flush()
	fmt.Fprintf(dst, "\np: Welch's two-sided t-test over the %d seeds of each arm (unequal variances); * marks p < 0.05.\n", f.runs)
	return dst.finish(f.force)
}

// signed prints a difference with its sign.
func signed(x float64) string {
	if x > 0 {
		return "+" + num(x)
	}
	return num(x)
}

func orDefaults(s string) string {
	if s == "" {
		return "(defaults)"
	}
	return s
}

// CompareRow is one metric of a comparison: both arms' mean and stdev
// over the seeds, the absolute and relative change of B against A, and
// Welch's t-test of the difference.
type CompareRow struct {
	Metric string  `json:"metric"`
	AMean  float64 `json:"a_mean"`
	ASd    float64 `json:"a_stdev"`
	BMean  float64 `json:"b_mean"`
	BSd    float64 `json:"b_stdev"`
	Diff   float64 `json:"diff"` // B mean − A mean
	// ChangePct is 100·(B−A)/A; null when A is 0 (no relative change
	// exists: 0 → 0.4 is not +0%).
	ChangePct *float64 `json:"change_pct"`
	// P is Welch's two-sided p-value (null with fewer than 2 runs, or
	// when both arms are constant and equal); Significant is P < 0.05.
	P           *float64 `json:"p_welch"`
	Significant bool     `json:"significant"`
}

// metric is one figure read from a result (ok false when the run has
// none, e.g. ops/s of a workload that counts no operations).
type metric struct {
	name string
	get  func(r *scenario.Result) (float64, bool)
}

// metricsOf lists the metrics compare and sweep report for results shaped
// like r0 (its workloads).
func metricsOf(r0 *scenario.Result) []metric {
	var gs []metric
	for wi, w := range r0.Workloads {
		wi, prefix := wi, ""
		if len(r0.Workloads) > 1 {
			prefix = w.Name + " "
		}
		lat := func(name string, f func(r *scenario.Result) int64) {
			gs = append(gs, metric{prefix + name, func(r *scenario.Result) (float64, bool) {
				if wi >= len(r.Workloads) {
					return 0, false
				}
				return float64(f(r)), true
			}})
		}
		lat("p50 (usec)", func(r *scenario.Result) int64 { return r.Workloads[wi].WakeupLatencyUS.P50 })
		lat("p75", func(r *scenario.Result) int64 { return r.Workloads[wi].WakeupLatencyUS.P75 })
		lat("p90", func(r *scenario.Result) int64 { return r.Workloads[wi].WakeupLatencyUS.P90 })
		lat("p95", func(r *scenario.Result) int64 { return r.Workloads[wi].WakeupLatencyUS.P95 })
		lat("p99", func(r *scenario.Result) int64 { return r.Workloads[wi].WakeupLatencyUS.P99 })
		lat("p99.5", func(r *scenario.Result) int64 { return r.Workloads[wi].WakeupLatencyUS.P995 })
		lat("p99.9", func(r *scenario.Result) int64 { return r.Workloads[wi].WakeupLatencyUS.P999 })
		gs = append(gs, metric{prefix + "ops/s", func(r *scenario.Result) (float64, bool) {
			if wi >= len(r.Workloads) {
				return 0, false
			}
			v := r.Workloads[wi].ThroughputOpsS
			return deref(v), v != nil
		}})
		gs = append(gs, metric{prefix + "completion (s)", func(r *scenario.Result) (float64, bool) {
			if wi >= len(r.Workloads) {
				return 0, false
			}
			v := r.Workloads[wi].CompletionS
			return deref(v), v != nil
		}})
	}
	return append(gs,
		metric{"probes/select_idle_cpu", func(r *scenario.Result) (float64, bool) { return r.Search.ProbesMean, true }},
		metric{"probes/wakeup", func(r *scenario.Result) (float64, bool) { return r.Search.ProbesPerWakeup, true }},
		metric{"placed on busy CPU %", func(r *scenario.Result) (float64, bool) { return r.Search.PlacedBusyPct, true }},
		metric{"cpu busy %", func(r *scenario.Result) (float64, bool) { return r.CPUBusyPct, true }},
	)
}

func compareRows(ra, rb []*scenario.Result) []CompareRow {
	var rows []CompareRow
	for _, g := range metricsOf(ra[0]) {
		xa, oka := collect(ra, g.get)
		xb, okb := collect(rb, g.get)
		if !oka && !okb {
			continue
		}
		rows = append(rows, compareRow(g.name, xa, xb))
	}
	return rows
}

// compareRow is one row from the two arms' values of a metric.
func compareRow(name string, xa, xb []float64) CompareRow {
	ma, sa := scenario.MeanStdev(xa)
	mb, sb := scenario.MeanStdev(xb)
	row := CompareRow{Metric: name, AMean: round3(ma), ASd: round3(sa), BMean: round3(mb), BSd: round3(sb), Diff: round3(mb - ma)}
	if ma != 0 {
		ch := round3(100 * (mb - ma) / math.Abs(ma))
		row.ChangePct = &ch
	}
	if w := scenario.WelchTest(xa, xb); !math.IsNaN(w.P) {
		p := math.Round(w.P*1e4) / 1e4
		row.P = &p
		row.Significant = w.P < 0.05
	}
	return row
}

// changeText renders a row's relative change: "+12.50%", or for a change
// from 0 "new" (0 → x) / "0" (0 → 0).
func changeText(r CompareRow) string {
	switch {
	case r.ChangePct != nil:
		return fmt.Sprintf("%+.2f%%", *r.ChangePct)
	case r.BMean == 0:
		return "0"
	}
	return "from 0"
}

func pText(r CompareRow) string {
	if r.P == nil {
		return "—"
	}
	s := fmt.Sprintf("%.4f", *r.P)
	if r.Significant {
		s += " *"
	}
	return s
}

func collect(rs []*scenario.Result, get func(*scenario.Result) (float64, bool)) ([]float64, bool) {
	var xs []float64
	ok := false
	for _, r := range rs {
		v, has := get(r)
		if has {
			ok = true
		}
		xs = append(xs, v)
	}
	return xs, ok
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
