package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"schedplay/engine"
	"schedplay/engine/field"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
	"schedplay/engine/workload"
	"schedplay/playground"
	"schedplay/policy"
	"schedplay/presets"
	"schedplay/scenario"
	"schedplay/trace"
)

type runFlags struct {
	preset      string
	machineFile string
	workloads   multiFlag
	sets        multiFlag
	duration    time.Duration
	durFlag     durationFlag
	seed        uint64
	runs        int
	format      string
	layout      string
	noWall      bool
	debug       bool
	trace       string
	traceFormat string
	traceWindow string
	traceCPUs   string
	traceMax    string
	out         string
	force       bool
	link        string // --link: a share link of the page
	arm         string // --arm: which of the link's arms

	tformat trace.Format
	topt    trace.Options

	// Filled by config:
	linkMachine *machine.Spec   // the link's own machine (not a preset)
	linkPolicy  *policy.Program // the link's arm's wake policy
	spec        *machine.Spec
	ncpu        int               // the machine's CPUs
	inputs      []input           // files the run reads
	policy      string            // --policy FILE (run)
	expanded    map[string]string // expanded workload spec -> as given
}

// addCommon registers the flags run and compare share.
func (f *runFlags) addCommon(fs *flag.FlagSet) {
	fs.StringVar(&f.preset, "preset", "", "machine preset `NAME` (list them with: schedsim presets); a path ending in .json is read as --machine-file")
	fs.StringVar(&f.machineFile, "machine-file", "", "JSON `FILE` describing your own machine, in the preset schema (see presets/machines/)")
	fs.Var(&f.workloads, "workload", "workload `SPEC`, kind:key=value,... (repeatable; list kinds and keys with: schedsim workloads)")
	fs.Var(&f.sets, "set", "knob setting `KNOB=VALUE` (repeatable; list knobs with: schedsim knobs)")
	fs.Func("era", "kernel `ERA` simulated: 5.2 (default), 2.6-o1, 6.6, 6.1 or 6.12; the same as --set era=ERA", func(s string) error {
		if _, err := knob.ParseEra(s); err != nil {
			return err
		}
		f.sets = append(f.sets, "era="+s)
		return nil
	})
	fs.Uint64Var(&f.seed, "seed", 1, "first random `SEED` (--runs N uses SEED..SEED+N-1)")
	fs.StringVar(&f.out, "out", "", "write the output to `FILE` instead of stdout (whole or not at all)")
	fs.BoolVar(&f.force, "force", false, "replace an existing --out/--trace file (never an input of the run)")
}

// addLink adds --link and --arm (run only).
func (f *runFlags) addLink(fs *flag.FlagSet) {
	fs.StringVar(&f.link, "link", "", "run the page's share `LINK` (the URL, or its #fragment): its machine, workloads, knobs and seed,\ninstead of --preset/--machine-file/--workload/--set/--era/--seed; --duration is how long (the page runs until stopped)")
	fs.StringVar(&f.arm, "arm", "A", "with --link: the link's `ARM` to run, A, B, C or D")
}

// fromLink fills the run's machine, workloads, knobs and seed from the
// page's share link (--link), as the page builds its arm --arm.
func (f *runFlags) fromLink() error {
	if f.preset != "" || f.machineFile != "" || len(f.workloads) > 0 || len(f.sets) > 0 {
		return usagef("--link names the machine, workloads and knobs itself: give it without --preset, --machine-file, --workload, --set or --era")
	}
	frag := f.link
	if _, after, ok := strings.Cut(frag, "#"); ok {
		frag = after
	}
	st, err := playground.Parse(frag)
	if err != nil {
		return usagef("--link: %v", err)
	}
	arms := "ABCD"[:st.NumArms()]
	i := strings.Index(arms, strings.ToUpper(f.arm))
	if len(f.arm) != 1 || i < 0 {
		return usagef("--arm %q: the link has arms %s", f.arm, strings.Join(strings.Split(arms, ""), ", "))
	}
	c := st.Config(i)
	if pol := st.ArmPolicy(i); pol.IsSet() {
		if f.policy != "" {
			return usagef("--link's arm %s runs the wake policy %s: give it without --policy", "ABCD"[i:i+1], pol.Name)
		}
		prog, err := playground.CompilePolicy(pol)
		if err != nil {
			return usagef("--link's policy: %v", err)
		}
		f.linkPolicy = prog
	}
	f.workloads = append(multiFlag(nil), c.Workloads...)
	f.sets = append(multiFlag(nil), c.Knobs...)
	f.seed = c.Seed
	if c.Machine != nil {
		f.linkMachine = c.Machine
	} else {
		f.preset = c.Preset
	}
	return nil
}

func runFlagSet(f *runFlags) *flag.FlagSet {
	fs := newFlagSet("run")
	f.addCommon(fs)
	f.addLink(fs)
	f.durationVar(fs, "simulated `TIME` to run, e.g. 500ms or 2s (at most 1h; default 10s, or an rt-app file's global.duration)")
	fs.IntVar(&f.runs, "runs", 1, "`N` runs with consecutive seeds; every number becomes mean/stdev")
	fs.StringVar(&f.format, "format", "text", "output `FORMAT`: text, json, csv, or a benchmark's own output: schbench (on stderr,\nas schbench prints it), hackbench (rt-tests), perf-bench (perf bench sched messaging|pipe)")
	fs.StringVar(&f.layout, "schbench-layout", "2019", "schbench percentile `LAYOUT` for --format schbench: 2016 (50.0000th), 2019 (50.0th) or\n2023 (Wakeup/Request/RPS blocks with sample counts)")
	fs.BoolVar(&f.noWall, "no-wall-time", false, "report sim_wall_s as 0 so identical runs give byte-identical output")
	fs.BoolVar(&f.debug, "debug", false, "check engine invariants after every event (slow)")
	fs.StringVar(&f.policy, "policy", "", "run the Starlark wake policy in `FILE` in place of the steps it defines (select_idle_sibling, or\nselect_idle_cpu, select_idle_core, newidle_balance)\n(examples in examples/policies/; a policy error stops the run naming its line)")
	fs.StringVar(&f.trace, "trace", "", "write a trace of the run to `FILE` (single run only); the format follows the name:\n.json (Chrome/Perfetto JSON), .json.gz (the same, gzip), .ftrace.txt (ftrace text)")
	fs.StringVar(&f.traceFormat, "trace-format", "", "trace `FORMAT` regardless of the name: json, json.gz or ftrace")
	fs.StringVar(&f.traceWindow, "trace-window", "", "trace only the simulated `WINDOW` START..END, e.g. 1s..1.1s, or 500ms.. (to the end)")
	fs.StringVar(&f.traceCPUs, "trace-cpus", "", "trace only the CPUs in `LIST`, e.g. 0-7,44-51")
	fs.StringVar(&f.traceMax, "trace-max", "256MB", "cap the trace at `SIZE` (KB, MB, GB; uncompressed): past it events are dropped,\nthe file says where it was cut and a warning goes to stderr")
	return fs
}

// durationVar registers --duration (default 10s).
func (f *runFlags) durationVar(fs *flag.FlagSet, usage string) {
	f.duration = 10 * time.Second
	f.durFlag = durationFlag{d: &f.duration}
	fs.Var(&f.durFlag, "duration", usage)
}

// runOutput is the JSON of one run: the result, plus, when the run was
// interrupted, "truncated": true and the simulated time reached.
type runOutput struct {
	*scenario.Result
	Truncated      bool     `json:"truncated,omitempty"`
	InterruptedAtS *float64 `json:"interrupted_at_s,omitempty"`
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// From here a signal stops the run between two events and the output
	// keeps the part done (cancelled before the run: at time 0).
	cooperative.Store(true)
	defer cooperative.Store(false)
	var f runFlags
	if err := parseFlags(runFlagSet(&f), args, stdout, false); err != nil {
		return err
	}
	if !slices.Contains(runFormats, f.format) {
		return usagef("--format %q not allowed (allowed: %s)%s", f.format, strings.Join(runFormats, ", "), field.Suggest(f.format, runFormats))
	}
	if f.runs > 1 && f.trace != "" {
		return usagef("--trace needs a single run (got --runs %d)", f.runs)
	}
	if err := f.traceOptions(); err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	if err := checkBenchFormat(f.format, f.layout, cfg.Workloads); err != nil {
		return err
	}
	if f.trace != "" && f.topt.Start >= cfg.Duration {
		return usagef("--trace-window %s starts at or after the end of the run (%v simulated): the trace would hold nothing", f.traceWindow, time.Duration(cfg.Duration))
	}
	// Building finds the limits (tasks, memory) the checks cannot; the
	// single run uses this build, --runs N builds one per seed.
	sim, err := f.build(cfg)
	if err != nil {
		return err
	}
	tr := &output{flag: "--trace", path: f.trace}
	out := &output{flag: "--out", path: f.out}
	if err := openOutputs(f.force, f.inputs, tr, out); err != nil {
		return err
	}
	defer tr.abort()
	defer out.abort()
	dst := newSink(stdout, out)

	if f.runs > 1 {
		results, err := scenario.RunManyContext(ctx, cfg, f.runs)
		if errors.Is(err, scenario.ErrInterrupted) {
			return &interruptedError{fmt.Sprintf("interrupted before the %d runs finished; no output written", f.runs)}
		}
		if err != nil {
			return err
		}
		if f.noWall {
			for _, r := range results {
				r.SimWallS = 0
			}
		}
		switch f.format {
		case "json":
			b, err := scenario.Aggregate(results)
			if err != nil {
				return err
			}
			dst.Write(b)
		case "csv":
			writeRunCSV(dst, results)
		case "schbench", "hackbench", "perf-bench", "cyclictest", "cyclictest-json":
			bs := f.benchStreams(dst, stderr)
			for i, r := range results {
				if err := writeBench(bs, f.format, f.layout, cfg.Workloads, r, runLabel(i, len(results), r.Seed)); err != nil {
					dst.finish(f.force)
					return err
				}
			}
		default:
			writeTextMulti(dst, cfg, results)
		}
		if err := dst.finish(f.force); err != nil {
			return err
		}
		printWarnings(stderr, results)
		return nil
	}

	var chrome trace.Writer
	if f.trace != "" {
		chrome, err = trace.Open(sim, tr, f.tformat, f.topt)
		if err != nil {
			return usagef("--trace %s: %v", f.trace, err)
		}
	}
	start := time.Now()
	stopped := advanceWithProgress(ctx, sim, cfg.Duration, stderr)
	wall := time.Since(start).Seconds()
	if chrome != nil {
		closeTrace := chrome.Close
		if stopped {
			closeTrace = chrome.CloseInterrupted
		}
		if err := closeTrace(); err != nil {
			return fmt.Errorf("--trace %s: %v", f.trace, err)
		}
		if err := tr.commit(f.force); err != nil {
			return err
		}
		st := chrome.Stats()
		if f.topt.Start >= sim.Now() {
			fmt.Fprintf(stderr, "schedsim: warning: --trace %s holds no scheduler events: the run ended at %.6g s simulated (its workloads finished), before --trace-window %s starts\n",
				f.trace, float64(sim.Now())/1e9, f.traceWindow)
		}
		if st.CutAt >= 0 {
			fmt.Fprintf(stderr, "schedsim: warning: --trace %s was cut at %.6g s simulated by the %s cap (%d events kept, %d dropped); trace less with --trace-window START..END or --trace-cpus LIST, or raise --trace-max\n",
				f.trace, float64(st.CutAt)/1e9, f.traceMax, st.Events, st.Dropped)
		}
	}
	if err := scenario.PolicyError(sim); err != nil {
		if f.policy == "" {
			return fmt.Errorf("--link's policy %s: %v", cfg.WakePolicy.Name(), err)
		}
		return fmt.Errorf("--policy %s: %v", f.policy, err)
	}
	res := scenario.Summarize(&cfg, sim, wall)
	if f.noWall {
		res.SimWallS = 0
	}
	var at *float64
	if stopped {
		v := res.DurationS
		at = &v
	}
	switch f.format {
	case "json":
		b, err := json.MarshalIndent(runOutput{Result: res, Truncated: stopped, InterruptedAtS: at}, "", "  ")
		if err != nil {
			return err
		}
		dst.Write(append(b, '\n'))
	case "csv":
		writeRunCSV(dst, []*scenario.Result{res})
	case "schbench", "hackbench", "perf-bench", "cyclictest", "cyclictest-json":
		bs := f.benchStreams(dst, stderr)
		if stopped {
			fmt.Fprintf(bs.err, "truncated: interrupted at %.6g s of %.6g s\n", *at, float64(cfg.Duration)/float64(engine.Second))
		}
		if err := writeBench(bs, f.format, f.layout, cfg.Workloads, res, ""); err != nil && !stopped {
			dst.finish(f.force)
			return err
		}
	default:
		if stopped {
			fmt.Fprintf(dst, "truncated: interrupted at %.6g s of %.6g s; the results cover the part done\n", *at, float64(cfg.Duration)/float64(engine.Second))
		}
		writeText(dst, cfg, res)
	}
	if err := dst.finish(f.force); err != nil {
		return err
	}
	printWarnings(stderr, []*scenario.Result{res})
	if stopped {
		where := "the output above"
		var kept []string
		for _, o := range []*output{tr, out} {
			if o.path != "" {
				kept = append(kept, o.flag+" "+o.path)
			}
		}
		if len(kept) > 0 {
			where = strings.Join(kept, " and ")
		}
		return &interruptedError{fmt.Sprintf("interrupted at %.6g s of %.6g s simulated; the part done is in %s, marked truncated",
			*at, float64(cfg.Duration)/float64(engine.Second), where)}
	}
	return nil
}

// printWarnings writes each result's warnings (Result.Warnings, also in
// the JSON) on stderr, naming the seed when there are several runs.
func printWarnings(stderr io.Writer, results []*scenario.Result) {
	for _, r := range results {
		for _, w := range r.Warnings {
			if len(results) > 1 {
				fmt.Fprintf(stderr, "schedsim: warning: seed %d: %s\n", r.Seed, w)
			} else {
				fmt.Fprintf(stderr, "schedsim: warning: %s\n", w)
			}
		}
	}
}

// advanceWithProgress runs sim to t; on a terminal it shows, on stderr,
// the simulated time reached and an ETA, rewritten in place every half
// second of a run longer than a second.
func advanceWithProgress(ctx context.Context, sim *engine.Sim, t int64, stderr io.Writer) bool {
	if !isTerminal(stderr) {
		return scenario.AdvanceContext(ctx, sim, t)
	}
	start, shown := time.Now(), false
	step := max(t/200, 1)
	for now := int64(0); now < t; {
		now = min(now+step, t)
		if scenario.AdvanceContext(ctx, sim, now) {
			if shown {
				fmt.Fprint(stderr, "\033[K\r")
			}
			return true
		}
		if sim.AllFinished() {
			break
		}
		if el := time.Since(start); el > time.Second && (!shown || el%(500*time.Millisecond) < 50*time.Millisecond) {
			frac := float64(now) / float64(t)
			eta := time.Duration(float64(el) / frac * (1 - frac)).Round(time.Second)
			fmt.Fprintf(stderr, "run: %.3g of %.3g s simulated (%.0f%%), %s elapsed, ETA %s\033[K\r",
				float64(now)/1e9, float64(t)/1e9, 100*frac, el.Round(time.Second), eta)
			shown = true
		}
	}
	if shown {
		fmt.Fprint(stderr, "\033[K\r")
	}
	return false
}

// benchStreams sends a bench format's stdout lines to dst (stdout or the
// --out file) and its stderr lines to stderr, or to the --out file too.
func (f *runFlags) benchStreams(dst *sink, stderr io.Writer) benchStreams {
	if f.out != "" {
		return benchStreams{out: dst, err: dst}
	}
	return benchStreams{out: flushedStdout{dst}, err: stderrAfter{dst, stderr}}
}

// flushedStdout writes to stdout at once, so the lines keep their order
// with the ones written to stderr.
type flushedStdout struct{ dst *sink }

func (s flushedStdout) Write(p []byte) (int, error) {
	n, err := s.dst.Write(p)
	s.dst.flushStdout()
	return n, err
}

// stderrAfter writes to stderr after flushing what is buffered for
// stdout, so the two streams interleave as the real tool's do.
type stderrAfter struct {
	dst    *sink
	stderr io.Writer
}

func (s stderrAfter) Write(p []byte) (int, error) {
	s.dst.flushStdout()
	return s.stderr.Write(p)
}

// sink is where a verb's result goes: stdout, or the --out file (renamed
// into place by finish). Write errors are kept and reported by finish.
type sink struct {
	bw  *bufio.Writer
	out *output
}

func newSink(stdout io.Writer, out *output) *sink {
	if out.path != "" {
		return &sink{bw: bufio.NewWriter(out), out: out}
	}
	return &sink{bw: bufio.NewWriter(stdout), out: out}
}

func (s *sink) Write(p []byte) (int, error) { return s.bw.Write(p) }

// flushStdout writes out what is buffered when the sink is stdout (an
// --out file is written as a whole at the end anyway).
func (s *sink) flushStdout() {
	if s.out.path == "" {
		s.bw.Flush()
	}
}

func (s *sink) finish(force bool) error {
	if err := s.bw.Flush(); err != nil {
		if s.out.path != "" {
			return fmt.Errorf("--out %s: %v", s.out.path, cause(err))
		}
		return fmt.Errorf("writing the output to stdout: %v", cause(err))
	}
	return s.out.commit(force)
}

// config checks the flags one at a time, so every error names the flag
// (and the value) at fault, and returns the run's config.
func (f *runFlags) config() (scenario.Config, error) {
	if f.link != "" {
		if err := f.fromLink(); err != nil {
			return scenario.Config{}, err
		}
	}
	cfg := scenario.Config{Preset: f.preset, Knobs: f.sets, Seed: f.seed, Duration: int64(f.duration), Debug: f.debug}
	if f.policy != "" {
		prog, err := loadPolicy(f.policy)
		if err != nil {
			return cfg, err
		}
		cfg.WakePolicy = prog
		f.inputs = append(f.inputs, input{flag: "--policy", path: f.policy})
	} else if f.linkPolicy != nil {
		cfg.WakePolicy = f.linkPolicy
	}
	if cfg.Duration <= 0 || cfg.Duration > scenario.MaxDuration {
		return cfg, usagef("--duration %v out of range (allowed: 1ns..%v)", f.duration, time.Duration(scenario.MaxDuration))
	}
	if f.runs < 1 || f.runs > scenario.MaxRuns {
		return cfg, usagef("--runs %d out of range (allowed: 1..%d)", f.runs, scenario.MaxRuns)
	}
	if f.seed > ^uint64(0)-uint64(f.runs-1) {
		return cfg, usagef("--seed %d with --runs %d: the seeds SEED..SEED+%d would pass %d (2^64-1) and wrap to 0", f.seed, f.runs, f.runs-1, ^uint64(0))
	}
	if len(f.workloads) > scenario.MaxWorkloads {
		return cfg, usagef("--workload given %d times (limit %d)", len(f.workloads), scenario.MaxWorkloads)
	}
	if err := f.expandRTAppFiles(); err != nil {
		return cfg, err
	}
	if !f.durFlag.set {
		// rt-app's global.duration is the run's length unless --duration
		// says otherwise (the longest, when several files set one).
		longest := int64(0)
		for _, w := range f.workloads {
			if app, err := workload.ParseRTAppSpec(f.expandedSpec(w)); err == nil {
				longest = max(longest, app.Duration)
			}
		}
		if longest > scenario.MaxDuration {
			return cfg, usagef("an rt-app file's global.duration is %v, more than a run may simulate (%v): give --duration (at most %v) to run part of it",
				time.Duration(longest), time.Duration(scenario.MaxDuration), time.Duration(scenario.MaxDuration))
		}
		if longest > 0 {
			cfg.Duration = longest
			f.duration = time.Duration(cfg.Duration)
		}
	}
	for _, w := range f.workloads {
		if _, err := workload.Parse(f.expandedSpec(w)); err != nil {
			return cfg, workloadError(w, err)
		}
		cfg.Workloads = append(cfg.Workloads, f.expandedSpec(w))
	}

	if f.machineFile != "" && f.preset != "" {
		// Which one names the machine? The file's was simulated while
		// every output said the preset's: refuse the pair.
		return cfg, usagef("--preset %s and --machine-file %s both name the machine: give one (--machine-file alone runs the file's machine under its own name)", f.preset, f.machineFile)
	}
	if err := setsOnce(f.sets); err != nil {
		return cfg, err
	}
	file, fileFlag := f.machineFile, "--machine-file"
	if file == "" && strings.HasSuffix(f.preset, ".json") {
		file, fileFlag = f.preset, "--preset"
	}
	machineFlag := "--preset " + f.preset
	if f.linkMachine != nil {
		f.spec = f.linkMachine
		cfg.Machine = f.linkMachine
		cfg.Preset = f.linkMachine.Name
		machineFlag = "--link's machine"
	} else if file != "" {
		machineFlag = fileFlag + " " + file
		f.inputs = append(f.inputs, input{flag: fileFlag, path: file})
		data, err := readLimited(file, presets.MaxInputBytes)
		if err != nil {
			return cfg, usagef("%s: %v", machineFlag, cause(err))
		}
		spec, err := presets.ParseMachine(data, file)
		if err != nil {
			return cfg, usagef("%s: %v", fileFlag, err)
		}
		f.spec = spec
		cfg.Machine = spec
		if cfg.Preset == "" || cfg.Preset == file {
			cfg.Preset = spec.Name
		}
	} else {
		if f.preset == "" {
			return cfg, usagef("--preset is required (valid presets: %s; or --machine-file FILE)", strings.Join(machineNames(), ", "))
		}
		spec, err := presets.Machine(f.preset)
		if err != nil {
			return cfg, usagef("--preset: %v", err)
		}
		f.spec = spec
	}
	tp, err := machine.Build(f.spec)
	if err != nil {
		return cfg, usagef("%s: machine %s: %v", machineFlag, f.spec.Name, err)
	}
	f.ncpu = tp.NCPU
	// Each setting is checked on its own, but in the era the run selects
	// (knobs only one era has are valid there).
	var eraSets []string
	for _, set := range f.sets {
		if name, _, _ := strings.Cut(set, "="); strings.EqualFold(strings.TrimSpace(name), "era") {
			eraSets = append(eraSets, set)
		}
	}
	for _, set := range f.sets {
		if _, err := scenario.KnobValues(f.spec, append(eraSets[:len(eraSets):len(eraSets)], set)); err != nil {
			return cfg, usagef("--set %q: %v", set, err)
		}
	}
	for _, w := range f.workloads {
		if err := workload.Check(f.expandedSpec(w), tp.NCPU); err != nil {
			return cfg, workloadError(w, err)
		}
	}
	if len(f.workloads) == 0 {
		return cfg, usagef("no --workload given: the machine would only sit idle (add e.g. --workload schbench:m=2,t=22; list the kinds with: schedsim workloads)")
	}
	// Everything was checked above; this catches a check added to
	// scenario later.
	if _, _, err := cfg.Check(); err != nil {
		return cfg, usagef("%v", err)
	}
	return cfg, nil
}

// setsOnce refuses a knob set twice to different values (--set SIS_CORE=true
// --set SIS_CORE=false, or --era 6.6 --set era=5.2): the last would win
// silently. Unknown knobs and bad values are left to the checks after.
func setsOnce(sets []string) error {
	first := map[knob.ID]string{}
	for _, set := range sets {
		name, val, ok := strings.Cut(set, "=")
		id, known := knob.Lookup(strings.TrimSpace(name))
		if !ok || !known {
			continue
		}
		prev, seen := first[id]
		if !seen {
			first[id] = set
			continue
		}
		_, pv, _ := strings.Cut(prev, "=")
		d := knob.ByID(id)
		a, errA := d.Parse(strings.TrimSpace(pv))
		b, errB := d.Parse(strings.TrimSpace(val))
		if errA != nil || errB != nil || a != b {
			return usagef("--set %s and --set %s both set knob %s: give it once", prev, set, d.Name)
		}
	}
	return nil
}

// build builds the run. Its errors are limits of the simulator found only
// when the tasks are created (e.g. too many tasks): usage errors.
func (f *runFlags) build(cfg scenario.Config) (*engine.Sim, error) {
	sim, err := cfg.Build()
	if err == nil {
		return sim, nil
	}
	if quoted, rest, ok := splitWorkloadError(err.Error()); ok {
		for _, w := range f.workloads {
			if sp, perr := workload.Parse(f.expandedSpec(w)); perr == nil &&
				strings.HasPrefix(sp.String(), strings.TrimSuffix(quoted, "…")) {
				return nil, usagef("--workload %q: %s", w, rest)
			}
		}
		return nil, usagef("--workload %q: %s", quoted, rest)
	}
	return nil, usagef("--workload (all together): %v", err)
}

func (f *runFlags) expandedSpec(w string) string {
	if e, ok := f.expanded[w]; ok {
		return e
	}
	return w
}

// workloadError names the --workload flag and the spec as given.
func workloadError(given string, err error) error {
	msg := err.Error()
	if _, rest, ok := splitWorkloadError(msg); ok {
		msg = rest
	}
	return usagef("--workload %q: %s", given, msg)
}

// splitWorkloadError splits the workload package's `workload "SPEC": …`.
func splitWorkloadError(msg string) (spec, rest string, ok bool) {
	after, found := strings.CutPrefix(msg, "workload ")
	if !found {
		return "", msg, false
	}
	q, err := strconv.QuotedPrefix(after)
	if err != nil {
		return "", msg, false
	}
	rest, found = strings.CutPrefix(after[len(q):], ": ")
	if !found {
		return "", msg, false
	}
	spec, _ = strconv.Unquote(q)
	return spec, rest, true
}

// expandRTAppFiles turns "rtapp:file=PATH[+PATH...][,key=value...]" (and
// "trace:file=PATH") into the self-contained "rtapp:b64=...[,key=value...]"
// spec (the engine reads no files; a spec must also work in a share
// link), and records PATH as an input of the run. The file is parsed
// once, as written, so an error gives its line and column in the file
// (the spec carries it compacted onto one line); for an rt-app file the
// engine keeps that parse for the spec, so the checks and the build that
// follow do not parse it again and report at the file's lines too
// (workload.RTAppFileSpec).
func (f *runFlags) expandRTAppFiles() error {
	f.expanded = map[string]string{}
	for _, sp := range f.workloads {
		rest, ok := strings.CutPrefix(strings.TrimSpace(sp), "rtapp:file=")
		limit, toSpec := int64(workload.RTAppMaxBytes), workload.RTAppFileSpec
		if !ok {
			if rest, ok = strings.CutPrefix(strings.TrimSpace(sp), "trace:file="); !ok {
				continue
			}
			limit, toSpec = traceFileKind() // import.go
		}
		path, keys := splitFileKeys(rest)
		var spec string
		if paths := rtappMergePaths(path); ok && paths != nil {
			// rtapp:file=global.json+tasks.json: merged as rt-app's
			// merge.py merges them (workload.RTAppFilesSpec).
			var files []workload.RTAppFile
			for _, p := range paths {
				f.inputs = append(f.inputs, input{flag: "--workload", path: p})
				data, err := readLimited(p, limit)
				if err != nil {
					return usagef("--workload %q: %s: %v", sp, p, cause(err))
				}
				files = append(files, workload.RTAppFile{Name: p, Data: data})
			}
			var err error
			if spec, err = workload.RTAppFilesSpec(files); err != nil {
				return usagef("--workload %q: %v", sp, err)
			}
		} else {
			f.inputs = append(f.inputs, input{flag: "--workload", path: path})
			data, err := readLimited(path, limit)
			if err != nil {
				return usagef("--workload %q: %s: %v", sp, path, cause(err))
			}
			if spec, err = toSpec(data); err != nil {
				return usagef("--workload %q: %s: %v", sp, path, err)
			}
		}
		if keys != "" {
			spec += "," + keys
			if _, err := workload.Parse(spec); err != nil {
				_, msg, _ := splitWorkloadError(err.Error())
				return usagef("--workload %q: %s", sp, msg)
			}
		}
		f.expanded[sp] = spec
	}
	return nil
}

// rtappMergePaths splits "a.json+b.json" into its files, or returns nil
// for one file (a path that exists as written is one file, "+" and all).
func rtappMergePaths(path string) []string {
	if !strings.Contains(path, "+") {
		return nil
	}
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	return strings.Split(path, "+")
}

// splitFileKeys splits "PATH,nice=5,cpus=0-3,8" into the path and the
// keys after it: the path ends at the first comma followed by key=.
func splitFileKeys(rest string) (path, keys string) {
	pieces := strings.Split(rest, ",")
	path = pieces[0]
	for i := 1; i < len(pieces); i++ {
		if k, _, ok := strings.Cut(pieces[i], "="); ok && k != "" && !strings.ContainsAny(k, "/. ") {
			return path, strings.Join(pieces[i:], ",")
		}
		path += "," + pieces[i]
	}
	return path, ""
}

func machineNames() []string { return presets.MachineNames() }

func readLimited(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

// loadPolicy reads and compiles a --policy file; its errors name the
// file, line and column.
func loadPolicy(path string) (*policy.Program, error) {
	prog, _, err := loadPolicySum(path)
	return prog, err
}

// loadPolicySum is loadPolicy and the sha256 (hex) of the source it
// compiled.
func loadPolicySum(path string) (*policy.Program, string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, "", usagef("--policy %s: %v", path, err)
	}
	if fi.Size() > policy.MaxSourceBytes {
		return nil, "", usagef("--policy %s: %d bytes, above the %d-byte limit of a policy", path, fi.Size(), policy.MaxSourceBytes)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, "", usagef("--policy %s: %v", path, err)
	}
	prog, err := policy.Compile(path, src)
	if err != nil {
		return nil, "", usagef("--policy: %v", err)
	}
	sum := sha256.Sum256(src)
	return prog, hex.EncodeToString(sum[:]), nil
}
