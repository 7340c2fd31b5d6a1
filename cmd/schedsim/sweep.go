package main

// sweep runs the cartesian product of --vary values × seeds, or a
// deterministic shard of it, into JSON Lines; merge aggregates the lines
// of any number of shards.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	json "github.com/goccy/go-json"

	"schedplay/engine/field"
	"schedplay/scenario"
)

// vary is one --vary: a knob (KNOB=a,b) or a workload key
// (workload.KEY=a,b for the first --workload, workloadN.KEY for the Nth).
type vary struct {
	name   string
	values []string
}

// sweepLine is one run of a sweep: one line of the --out JSONL.
type sweepLine struct {
	Index  int               `json:"index"` // position in the unsharded order
	Point  map[string]string `json:"point"` // the --vary values of this run
	Seed   uint64            `json:"seed"`
	Preset string            `json:"preset"`
	Knobs  []string          `json:"set"`
	Specs  []string          `json:"workloads"`
	DurS   float64           `json:"duration_s"`
	// Policy is the wake policy file the run ran (--policy, or the
	// policy axis's value) and PolicySum the sha256 of its source.
	Policy    string             `json:"policy,omitempty"`
	PolicySum string             `json:"policy_sha256,omitempty"`
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	Error     string             `json:"error,omitempty"`
}

type sweepFlags struct {
	runFlags
	varies   multiFlag
	seeds    int
	parallel int
	shard    string
	resume   bool
	policies map[string]sweepPolicy // by file: --policy and the policy axis
}

func sweepFlagSet(f *sweepFlags) *flag.FlagSet {
	fs := newFlagSet("sweep")
	f.addCommon(fs)
	f.durationVar(fs, "simulated `TIME` per run, e.g. 500ms or 2s (at most 1h)")
	fs.Var(&f.varies, "vary", "`VARY` NAME=a,b,...: a knob (SIS_CORE=true,false) or a workload key (workload.t=8,16 for the\nfirst --workload, workload2.KEY for the second); repeatable, the runs are the cartesian product")
	fs.StringVar(&f.policy, "policy", "", "run the Starlark wake policy in `FILE` (in place of the steps it defines) in every run; or vary it:\n--vary policy=a.star,b.star,none (none: the era's own); a run's line names the file and its sha256,\nand --resume refuses runs of an edited file")
	fs.IntVar(&f.seeds, "seeds", 5, "`N` seeds per point: SEED..SEED+N-1")
	fs.IntVar(&f.parallel, "parallel", 0, "`P` runs at once (default: the number of CPUs)")
	fs.StringVar(&f.shard, "shard", "1/1", "run only `SHARD` I/N of the runs (run k belongs to shard k mod N + 1): N machines,\neach with its I, together run the sweep once")
	fs.BoolVar(&f.resume, "resume", false, "continue the sweep in --out: run only the runs not in it (its lines must be this sweep's\nruns, same --vary, --seeds, --seed, --set, --workload, --duration, --preset and --shard);\na partial last line is dropped; a missing file is started")
	// A sweep's --out is appended to run by run, not written whole.
	fs.Lookup("out").Usage = "append each run's line to `FILE` as the run finishes (one write per line; a finished\nsweep's file is then put in run order); an existing FILE needs --resume or --force"
	fs.Lookup("force").Usage = "empty an existing --out file and run the whole sweep (never an input of the run)"
	return fs
}

// cmdSweep runs a sweep (or one shard of it) and writes one JSON line per
// run, in run order, to --out or stdout. Progress goes to stderr.
func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cooperative.Store(true)
	defer cooperative.Store(false)
	var f sweepFlags
	if err := parseFlags(sweepFlagSet(&f), args, stdout, false); err != nil {
		return err
	}
	shardI, shardN, err := parseShard(f.shard)
	if err != nil {
		return err
	}
	if f.seeds < 1 || f.seeds > scenario.MaxRuns {
		return usagef("--seeds %d out of range (allowed: 1..%d)", f.seeds, scenario.MaxRuns)
	}
	if f.parallel < 0 {
		return usagef("--parallel %d out of range (allowed: 0 for all CPUs, or ≥ 1)", f.parallel)
	}
	f.runs = 1
	pol := f.policy
	f.policy = "" // loaded below, with its sum
	base, err := f.config()
	if err != nil {
		return err
	}
	f.policy = pol
	if err := f.loadSweepPolicies(&base); err != nil {
		return err
	}
	plan, err := f.planSweep(base)
	if err != nil {
		return err
	}
	// Every point is checked before anything runs.
	if err := f.checkPoints(ctx, plan, base, shardI, shardN, stderr); err != nil {
		return err
	}
	mine := 0 // runs k < plan.runs with k mod N = I-1
	if shardI-1 < plan.runs {
		mine = (plan.runs-shardI)/shardN + 1
	}
	if f.resume && f.out == "" {
		return usagef("--resume continues the sweep in --out FILE: give --out")
	}
	if f.resume && f.force {
		return usagef("--resume and --force: --resume keeps the runs in --out %s, --force throws them away; give one", f.out)
	}
	if f.out != "" {
		return f.sweepToFile(ctx, plan, base, shardI, shardN, mine, stderr)
	}
	out := &output{}
	dst := newSink(stdout, out)
	lines := &lineWriter{dst: dst, pending: map[int][]byte{}}

	par := f.parallel
	if par == 0 {
		par = max(1, numCPU())
	}
	prog := newProgress(stderr, mine)
	interrupted := f.runAll(ctx, plan, base, shardI, shardN, mine, nil, par, prog, lines.done)
	if interrupted || ctx.Err() != nil {
		// Keep every finished run (an interrupted shard is what a Slurm
		// or Kubernetes preemption leaves): the lines are complete runs
		// in run order, with the unfinished ones missing, and merge
		// reads them.
		n := lines.flushAll()
		if n == 0 {
			return &interruptedError{fmt.Sprintf("interrupted after 0 of %d runs; nothing written", mine)}
		}
		if err := dst.finish(f.force); err != nil {
			return err
		}
		return &interruptedError{fmt.Sprintf("interrupted after %d of %d runs; the %d finished runs are on stdout (one line each, in run order; merge reads them)", n, mine, n)}
	}
	lines.flushAll()
	prog.finish()
	if err := dst.finish(f.force); err != nil {
		return err
	}
	if prog.failed > 0 {
		return fmt.Errorf("%d of %d runs failed (their lines carry \"error\")", prog.failed, mine)
	}
	return nil
}

// sweepToFile runs the sweep into --out, appending each run's line as
// the run finishes (see sweepout.go); with --resume only the runs not in
// the file run. A complete sweep's file is then put in run order.
func (f *sweepFlags) sweepToFile(ctx context.Context, plan *sweepPlan, base scenario.Config, shardI, shardN, mine int, stderr io.Writer) error {
	existed := false
	if _, err := os.Lstat(f.out); err == nil {
		existed = true
	}
	out, res, err := f.openSweepOut(plan, base, shardI, shardN, stderr)
	if err != nil {
		return err
	}
	prev := len(res.done)
	todo := mine - prev
	if f.resume && existed {
		fmt.Fprintf(stderr, "sweep: --resume: %d of the %d runs are in %s already; running the other %d\n", prev, mine, f.out, todo)
	}
	par := f.parallel
	if par == 0 {
		par = max(1, numCPU())
	}
	prog := newProgress(stderr, todo)
	interrupted := f.runAll(ctx, plan, base, shardI, shardN, mine, res.done, par, prog, func(_ int, ln *sweepLine) error { return out.add(ln) })
	werr := out.close()
	n := out.written
	if werr != nil {
		return werr
	}
	if interrupted || ctx.Err() != nil {
		if n+prev == 0 && !existed {
			os.Remove(f.out)
			return &interruptedError{fmt.Sprintf("interrupted after 0 of %d runs; nothing written", mine)}
		}
		return &interruptedError{fmt.Sprintf("interrupted after %d of %d runs (%d of them by this process); the %d finished runs are in --out %s (one line each, in the order they finished; merge reads them, sweep --resume runs the rest)",
			n+prev, mine, n, n+prev, f.out)}
	}
	prog.finish()
	if err := sortRuns(f.out); err != nil {
		return err
	}
	if failed := prog.failed + res.failed; failed > 0 {
		return fmt.Errorf("%d of %d runs failed (their lines carry \"error\")", failed, mine)
	}
	return nil
}

// runAll runs the shard's runs not in skip (by index), par at once, and
// hands each finished run's line to done (a run cut short by ctx is no
// result and is dropped). It reports whether ctx ended before every run
// started.
func (f *sweepFlags) runAll(ctx context.Context, plan *sweepPlan, base scenario.Config, shardI, shardN, mine int, skip map[int]bool,
	par int, prog *progress, done func(j int, ln *sweepLine) error) bool {
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	defer wg.Wait()
	for j := 0; j < mine; j++ {
		k := shardI - 1 + j*shardN
		if skip[k] {
			continue
		}
		if ctx.Err() != nil {
			return true
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return true
		}
		ln, err := f.runLine(plan, base, k)
		if err != nil { // checked before anything ran: a bug
			panic(err)
		}
		wg.Add(1)
		go func(j int, ln *sweepLine) {
			defer wg.Done()
			defer func() { <-sem }()
			cfg := base
			cfg.Knobs, cfg.Workloads, cfg.Seed = ln.Knobs, ln.Specs, ln.Seed
			cfg.WakePolicy = nil
			if ln.Policy != "" {
				cfg.WakePolicy = f.policies[ln.Policy].prog
			}
			cfg.Duration = int64(ln.DurS * 1e9)
			r, err := scenario.RunContext(ctx, cfg)
			if errors.Is(err, scenario.ErrInterrupted) {
				return // half a run is no result
			}
			if err != nil {
				ln.Error = err.Error()
			} else {
				ln.Metrics = metricValues(r)
			}
			if err := done(j, ln); err != nil {
				panic(err) // json.Marshal of plain values: a bug
			}
			prog.done(err != nil)
		}(j, ln)
	}
	return false
}

// lineWriter writes a sweep's lines in run order as the runs finish (runs
// finish out of order with --parallel): a line waits only for the runs
// before it, and to stdout each goes out at once.
type lineWriter struct {
	mu      sync.Mutex
	dst     *sink
	next    int            // the next line to write, by position in the shard
	pending map[int][]byte // finished lines waiting for an earlier one
	written int
}

func (w *lineWriter) done(j int, ln *sweepLine) error {
	b, err := json.Marshal(ln)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending[j] = append(b, '\n')
	for {
		b, ok := w.pending[w.next]
		if !ok {
			break
		}
		w.write(b)
		delete(w.pending, w.next)
		w.next++
	}
	w.dst.flushStdout()
	return nil
}

// flushAll writes the lines still waiting (after an interrupt: those
// behind an unfinished run), in order, and returns how many lines were
// written in all.
func (w *lineWriter) flushAll() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]int, 0, len(w.pending))
	for j := range w.pending {
		keys = append(keys, j)
	}
	sort.Ints(keys)
	for _, j := range keys {
		w.write(w.pending[j])
		delete(w.pending, j)
	}
	return w.written
}

func (w *lineWriter) write(b []byte) {
	w.dst.Write(b)
	w.written++
}

// parseShard reads --shard I/N (1 ≤ I ≤ N).
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, usagef("--shard %q: want I/N, e.g. 3/8", s)
	}
	n, err := field.Int("--shard N", strings.TrimSpace(b), 1, 1<<20)
	if err != nil {
		return 0, 0, usagef("%v", err)
	}
	i, err := field.Int("--shard I", strings.TrimSpace(a), 1, n)
	if err != nil {
		return 0, 0, usagef("%v", err)
	}
	return int(i), int(n), nil
}

// metricValues reads every metric of r by name.
func metricValues(r *scenario.Result) map[string]float64 {
	m := map[string]float64{}
	for _, g := range metricsOf(r) {
		if v, ok := g.get(r); ok {
			m[g.name] = v
		}
	}
	return m
}

// progress reports runs done, failures and an ETA on stderr: rewritten
// in place on a terminal, a line at most every 5 s otherwise.
type progress struct {
	mu           sync.Mutex
	w            io.Writer
	tty          bool
	total, n     int
	failed       int
	start, shown time.Time
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, tty: isTerminal(w), total: total, start: time.Now()}
}

func (p *progress) done(failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if failed {
		p.failed++
	}
	every := 5 * time.Second
	if p.tty {
		every = 200 * time.Millisecond
	}
	if time.Since(p.shown) < every && p.n < p.total {
		return
	}
	p.shown = time.Now()
	el := time.Since(p.start)
	eta := time.Duration(float64(el) / float64(p.n) * float64(p.total-p.n)).Round(time.Second)
	end := "\n"
	if p.tty {
		end = "\033[K\r"
	}
	fmt.Fprintf(p.w, "sweep: %d/%d runs done, %d failed, %s elapsed, ETA %s%s", p.n, p.total, p.failed, el.Round(time.Second), eta, end)
}

func (p *progress) finish() {
	if p.tty && p.total > 0 {
		fmt.Fprintln(p.w)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// maxSweepLine bounds a line merge reads (a sweep's lines are a few KB).
const maxSweepLine = 64 << 20

// mergeRow is one metric of one point, over the seeds merged.
type mergeRow struct {
	Point  string  `json:"point"`
	Metric string  `json:"metric"`
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Stdev  float64 `json:"stdev"`
	CI95   float64 `json:"ci95"` // half-width, Student's t, n−1 df; NaN (null) for n < 2
}

// cmdMerge reads sweep JSONL files (any shards, any order) and prints per
// point and metric: n, mean, stdev and the 95% confidence interval.
func cmdMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("merge")
	format := fs.String("format", "text", "output `FORMAT`: text, csv or json")
	outPath := fs.String("out", "", "write the output to `FILE` instead of stdout (whole or not at all)")
	force := fs.Bool("force", false, "replace an existing --out file")
	if err := parseFlags(fs, args, stdout, true); err != nil {
		return err
	}
	if *format != "text" && *format != "csv" && *format != "json" {
		return usagef("--format %q not allowed (allowed: text, csv, json)", *format)
	}
	if fs.NArg() == 0 {
		return usagef("merge: give the sweep result files (e.g. results-*.jsonl)")
	}
	type key struct {
		point string
		seed  uint64
	}
	seen := map[key]string{}
	polOf := map[string]struct{ path, sum, where string }{} // point → the policy its first line ran
	values := map[string]map[string][]float64{}             // point → metric → values
	var inputs []input
	failed := 0
	for _, path := range fs.Args() {
		inputs = append(inputs, input{flag: "merge", path: path})
		fh, err := os.Open(path)
		if err != nil {
			return usagef("merge: %s: %v", path, cause(err))
		}
		if st, err := fh.Stat(); err == nil && st.IsDir() {
			fh.Close()
			return usagef("merge: %s is a directory; give the sweep result files in it (e.g. %s)", path, filepath.Join(path, "*.jsonl"))
		}
		// A sweep killed in the middle of appending a line leaves it
		// without its newline: such a last line is left out.
		endsNL := true
		if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			last := make([]byte, 1)
			if _, err := fh.ReadAt(last, st.Size()-1); err == nil {
				endsNL = last[0] == '\n'
			}
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), maxSweepLine)
		for ln := 1; sc.Scan(); ln++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var l sweepLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				n := len(sc.Bytes())
				if !endsNL && !sc.Scan() && sc.Err() == nil {
					fmt.Fprintf(stderr, "merge: %s line %d: a partial last line (%d bytes without a newline: a run cut off while it was written) left out\n", path, ln, n)
					break
				}
				fh.Close()
				return usagef("merge: %s line %d: not a sweep result line: %v", path, ln, err)
			}
			pt := pointString(l.Point)
			k := key{pt, l.Seed}
			if prev, dup := seen[k]; dup {
				fh.Close()
				return usagef("merge: %s line %d: point %s seed %d is also in %s (overlapping shards?)", path, ln, pt, l.Seed, prev)
			}
			seen[k] = fmt.Sprintf("%s line %d", path, ln)
			if ps, ok := polOf[pt]; ok && ps.sum != l.PolicySum {
				fh.Close()
				return usagef("merge: %s line %d: point %s ran policy %s, but %s ran %s: not the same sweep (a policy file edited between shards?)",
					path, ln, pt, policyName(l.Policy, l.PolicySum), ps.where, policyName(ps.path, ps.sum))
			}
			polOf[pt] = struct{ path, sum, where string }{l.Policy, l.PolicySum, seen[k]}
			if l.Error != "" {
				failed++
				continue
			}
			if values[pt] == nil {
				values[pt] = map[string][]float64{}
			}
			for m, v := range l.Metrics {
				values[pt][m] = append(values[pt][m], v)
			}
		}
		err = sc.Err()
		fh.Close()
		if errors.Is(err, bufio.ErrTooLong) {
			return usagef("merge: %s: a line longer than %d MB: not a sweep result file", path, maxSweepLine>>20)
		}
		if err != nil {
			return usagef("merge: %s: %v", path, cause(err))
		}
	}
	var rows []mergeRow
	var pts []string
	for pt := range values {
		pts = append(pts, pt)
	}
	sort.Strings(pts)
	for _, pt := range pts {
		var ms []string
		for m := range values[pt] {
			ms = append(ms, m)
		}
		sort.Strings(ms)
		for _, m := range ms {
			xs := values[pt][m]
			mean, sd := scenario.MeanStdev(xs)
			rows = append(rows, mergeRow{Point: pt, Metric: m, N: len(xs), Mean: round3(mean), Stdev: round3(sd), CI95: round3(scenario.CI95(xs))})
		}
	}
	out := &output{flag: "--out", path: *outPath}
	if err := openOutputs(*force, inputs, out); err != nil {
		return err
	}
	defer out.abort()
	dst := newSink(stdout, out)
	switch *format {
	case "json":
		type jrow struct {
			mergeRow
			CI95 *float64 `json:"ci95"`
		}
		var js []jrow
		for _, r := range rows {
			j := jrow{mergeRow: r}
			if !math.IsNaN(r.CI95) {
				v := r.CI95
				j.CI95 = &v
			}
			js = append(js, j)
		}
		b, err := json.MarshalIndent(js, "", "  ")
		if err != nil {
			return err
		}
		dst.Write(append(b, '\n'))
	case "csv":
		writeMergeCSV(dst, rows)
	default:
		tw := tabwriter.NewWriter(dst, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "point\tmetric\tn\tmean\tstdev\t95%% CI\t\n")
		for _, r := range rows {
			ci := "—"
			if !math.IsNaN(r.CI95) {
				ci = fmt.Sprintf("± %s", num(r.CI95))
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t\n", r.Point, r.Metric, r.N, num(r.Mean), num(r.Stdev), ci)
		}
		tw.Flush()
		fmt.Fprintln(dst, "\n95% CI: mean ± t(0.975, n−1)·stdev/√n (Student's t over the seeds).")
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "merge: %d failed runs left out (lines with \"error\")\n", failed)
	}
	return dst.finish(*force)
}

// pointString renders a point as "A=1 B=x" with the names sorted ("" for
// a sweep with no --vary).
func pointString(p map[string]string) string {
	var ks []string
	for k := range p {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, k+"="+p[k])
	}
	if len(parts) == 0 {
		return "(base)"
	}
	return strings.Join(parts, " ")
}

func numCPU() int { return runtime.GOMAXPROCS(0) }
