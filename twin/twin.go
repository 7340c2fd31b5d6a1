// Package twin checks the simulator against the machine it runs on: it
// runs a real scheduler benchmark (perf bench sched pipe and messaging,
// schbench when installed, or a built-in equivalent on real OS threads
// making the same syscalls), then the simulated one with the same
// parameters on a preset of this machine, and reports both side by side
// with the ratio simulated/real.
//
// It is not part of engine/ because it does I/O and runs processes.
package twin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"schedplay/detect"
	"schedplay/engine"
	"schedplay/engine/machine"
	"schedplay/scenario"
)

// The benchmarks twin knows, in the order it runs them.
const (
	BenchPipe      = "pipe"
	BenchMessaging = "messaging"
	BenchSchbench  = "schbench"
)

// Benches lists the benchmark names.
var Benches = []string{BenchPipe, BenchMessaging, BenchSchbench}

// Schema names the JSON report's layout.
const Schema = "schedplay-twin/1"

// Options say what to run and how long it may take.
type Options struct {
	Benches []string // default: Benches (schbench is skipped when not installed)

	PipeLoops       int64         // perf bench sched pipe -l (round trips)
	Groups          int           // perf bench sched messaging -g
	MsgLoops        int           // perf bench sched messaging -l
	SchbenchM       int           // schbench -m (message threads)
	SchbenchT       int           // schbench -t (workers per message thread; 0: the CPU count)
	SchbenchRuntime time.Duration // schbench -r, and the simulated duration
	Threads         bool          // thread mode (perf -T / -t) instead of processes
	Builtin         bool          // run the built-in equivalents even when perf is installed
	Timeout         time.Duration // wall time each real run (and each simulated one) may take
	Seed            uint64        // the simulated runs' seed

	// PerfPath and SchbenchPath are the tools to run; "" looks "perf"
	// and "schbench" up on PATH. "-" means absent.
	PerfPath, SchbenchPath string

	// Progress gets one line per step (nil: none).
	Progress io.Writer
}

// Defaults fills the zero fields of o with the short defaults: the whole
// run takes a few seconds on a quiet 2-CPU machine.
func (o *Options) Defaults() {
	if len(o.Benches) == 0 {
		o.Benches = Benches
	}
	if o.PipeLoops <= 0 {
		o.PipeLoops = 20000
	}
	if o.Groups <= 0 {
		o.Groups = 2
	}
	if o.MsgLoops <= 0 {
		o.MsgLoops = 200
	}
	if o.SchbenchM <= 0 {
		o.SchbenchM = 1
	}
	if o.SchbenchT <= 0 {
		o.SchbenchT = runtime.NumCPU()
	}
	if o.SchbenchRuntime <= 0 {
		o.SchbenchRuntime = 5 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// Host describes the machine the real benchmarks ran on.
type Host struct {
	CPUs       int     `json:"cpus"`
	Kernel     string  `json:"kernel,omitempty"`
	CPUModel   string  `json:"cpu_model,omitempty"`
	LoadBefore float64 `json:"load_avg_before"` // /proc/loadavg 1-minute figure, -1: unknown
	LoadAfter  float64 `json:"load_avg_after"`
	// Noisy: the load average exceeded half the CPUs, so the real figures
	// include waiting behind other work.
	Noisy bool `json:"noisy"`
}

// Preset describes the machine the simulated runs ran on.
type Preset struct {
	Name string `json:"name"`
	// Source: "detected" (topology and measured costs), "detected-quick"
	// (topology only, costs the knob defaults) or "file".
	Source string `json:"source"`
	File   string `json:"file,omitempty"`
	CPUs   int    `json:"cpus"`
}

// Report is one twin run.
type Report struct {
	Schema     string        `json:"schema"`
	Date       string        `json:"date"`
	Host       Host          `json:"host"`
	Preset     Preset        `json:"preset"`
	Benchmarks []BenchResult `json:"benchmarks"`
	Notes      []string      `json:"notes,omitempty"`
}

// BenchResult is one benchmark, real and simulated.
type BenchResult struct {
	Bench   string   `json:"bench"`
	Real    Real     `json:"real"`
	Sim     Sim      `json:"sim"`
	Metrics []Metric `json:"metrics"`
	// Skipped says why the benchmark did not run (then Real, Sim and
	// Metrics are empty).
	Skipped string `json:"skipped,omitempty"`
}

// Real is what ran on the machine.
type Real struct {
	// Runner: "perf", "schbench" or "builtin".
	Runner  string  `json:"runner,omitempty"`
	Command string  `json:"command,omitempty"`
	Mode    string  `json:"mode,omitempty"` // "processes" or "threads"
	WallS   float64 `json:"wall_s"`
	// Fallback says why the built-in ran instead of the tool.
	Fallback string `json:"fallback,omitempty"`
	Error    string `json:"error,omitempty"`
	Output   string `json:"-"` // the tool's output, for the text report's -v
}

// Sim is the simulated run.
type Sim struct {
	Workload  string  `json:"workload,omitempty"`
	Seed      uint64  `json:"seed"`
	DurationS float64 `json:"duration_s"` // simulated time reached
	WallS     float64 `json:"wall_s"`
	// IPIsSent counts the simulated cross-CPU wakeups that sent an IPI,
	// and CPUBusyPct the machine's busy share: together they say whether
	// the simulated tasks ran apart (IPIs, wake costs) or together.
	IPIsSent   int64   `json:"ipis_sent"`
	CPUBusyPct float64 `json:"cpu_busy_pct"`
	Error      string  `json:"error,omitempty"`
}

// Metric is one figure, real and simulated; a side that has no figure is
// null, and so is the ratio then.
type Metric struct {
	Metric string   `json:"metric"`
	Unit   string   `json:"unit"`
	Real   *float64 `json:"real"`
	Sim    *float64 `json:"sim"`
	Ratio  *float64 `json:"ratio"` // sim / real
	// Better: "lower" or "higher", how to read a ratio (for a time, a
	// ratio below 1 means the simulated machine is faster).
	Better string `json:"better"`
}

// Run runs the benchmarks of opt, real then simulated, on spec (the
// preset of this machine) and returns the report. A benchmark that fails
// is reported in its entry (Error, Skipped); Run itself fails only when
// ctx ends.
func Run(ctx context.Context, spec *machine.Spec, preset Preset, host Host, opt Options) (*Report, error) {
	opt.Defaults()
	rep := &Report{Schema: Schema, Date: time.Now().UTC().Format(time.RFC3339), Host: host, Preset: preset}
	rep.Preset.CPUs = spec.NumCPUs()
	rep.Preset.Name = spec.Name
	if rep.Host.CPUs <= 0 {
		rep.Host.CPUs = runtime.NumCPU()
	}
	rep.Host.LoadBefore = detect.LoadAvg()
	if rep.Host.LoadBefore > float64(rep.Host.CPUs)/2 {
		fmt.Fprintf(opt.Progress, "twin: warning: load average %.1f on %d CPUs: the real figures will include waiting behind other work (noisy)\n", rep.Host.LoadBefore, rep.Host.CPUs)
	}
	for _, b := range opt.Benches {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		var br BenchResult
		switch b {
		case BenchPipe:
			br = runPipe(ctx, spec, opt)
		case BenchMessaging:
			br = runMessaging(ctx, spec, opt)
		case BenchSchbench:
			br = runSchbench(ctx, spec, opt)
		default:
			return rep, fmt.Errorf("unknown benchmark %q (known: %s)", b, strings.Join(Benches, ", "))
		}
		rep.Benchmarks = append(rep.Benchmarks, br)
	}
	rep.Host.LoadAfter = detect.LoadAvg()
	rep.Host.Noisy = math.Max(rep.Host.LoadBefore, rep.Host.LoadAfter) > float64(rep.Host.CPUs)/2
	if rep.Host.Noisy {
		rep.Notes = append(rep.Notes, fmt.Sprintf("load average %.1f before and %.1f after, on %d CPUs: the real figures include waiting behind other work; rerun on a quiet machine", rep.Host.LoadBefore, rep.Host.LoadAfter, rep.Host.CPUs))
	}
	if preset.Source == "detected-quick" {
		rep.Notes = append(rep.Notes, "--quick: the preset's costs are the knob defaults, not this machine's (run without --quick to measure them)")
	}
	for _, n := range spec.Notes {
		if strings.HasPrefix(n, "measured: pipe round trip") {
			rep.Notes = append(rep.Notes, "preset "+n)
		}
	}
	if spec.NumCPUs() != rep.Host.CPUs {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the preset has %d CPUs and this machine %d: the two columns run on different machines", spec.NumCPUs(), rep.Host.CPUs))
	}
	return rep, ctx.Err()
}

// tool returns the path of a tool: path itself, or name looked up on PATH
// when path is "", or "" when absent ("-" or not found).
func tool(path, name string) string {
	if path == "-" {
		return ""
	}
	if path != "" {
		return path
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}

func mode(threads bool) string {
	if threads {
		return "threads"
	}
	return "processes"
}

func ptr(v float64) *float64 { return &v }

// metric builds a metric from the two sides (nil: no figure).
func metric(name, unit, better string, real, sim *float64) Metric {
	m := Metric{Metric: name, Unit: unit, Real: real, Sim: sim, Better: better}
	if real != nil && sim != nil && *real > 0 && !math.IsInf(*sim, 0) && !math.IsNaN(*sim) {
		m.Ratio = ptr(*sim / *real)
	}
	return m
}

func runPipe(ctx context.Context, spec *machine.Spec, opt Options) BenchResult {
	br := BenchResult{Bench: BenchPipe}
	var us, ops *float64
	real := &br.Real
	perf := tool(opt.PerfPath, "perf")
	switch {
	case opt.Builtin:
		real.Fallback = "--builtin"
	case perf == "":
		real.Fallback = "perf is not installed (not on PATH)"
	}
	if real.Fallback == "" {
		args := []string{"bench", "sched", "pipe", "-l", fmt.Sprint(opt.PipeLoops)}
		if opt.Threads {
			args = append(args, "-T")
		}
		fmt.Fprintf(opt.Progress, "twin: real: perf %s\n", strings.Join(args, " "))
		out, wall, err := runTool(ctx, opt.Timeout, perf, args...)
		*real = Real{Runner: "perf", Command: "perf " + strings.Join(args, " "), Mode: mode(opt.Threads), WallS: wall.Seconds(), Output: out}
		if err == nil {
			var p PerfPipe
			if p, err = ParsePerfPipe(out); err == nil {
				us, ops = ptr(p.UsecsPerOp), ptr(p.OpsPerSec)
				if p.Mode != "" {
					real.Mode = p.Mode
				}
			}
		}
		if err != nil {
			real.Fallback = fmt.Sprintf("perf failed: %v", err)
		}
	}
	if us == nil && ctx.Err() == nil {
		why := real.Fallback
		fmt.Fprintf(opt.Progress, "twin: real: built-in pipe ping-pong, 2 OS threads, %d round trips (%s)\n", opt.PipeLoops, why)
		wall, err := BuiltinPipe(ctx, opt.PipeLoops, opt.Timeout)
		*real = Real{Runner: "builtin", Fallback: why, Mode: "threads", WallS: wall.Seconds(),
			Command: fmt.Sprintf("built-in pipe ping-pong: 2 OS threads, 2 pipes, one 4-byte token, %d round trips (like perf bench sched pipe -T -l %d)", opt.PipeLoops, opt.PipeLoops)}
		if err != nil {
			real.Error = err.Error()
		} else {
			v := wall.Seconds() * 1e6 / float64(opt.PipeLoops)
			us, ops = ptr(v), ptr(math.Trunc(1e6/v))
		}
	}
	// The simulated run takes the mode the real one ran in.
	wl := fmt.Sprintf("pipe:l=%d", opt.PipeLoops)
	if real.Mode == "threads" {
		wl += ",T=1"
	}
	var sus, sops *float64
	res := simulate(ctx, spec, wl, scenario.MaxDuration, opt, &br.Sim)
	if res != nil {
		if c := res.Workloads[0].CompletionS; c == nil {
			br.Sim.Error = fmt.Sprintf("the simulated pipe did not finish within %.3g s simulated", res.DurationS)
		} else {
			// perf's arithmetic: usecs/op = total µs / loops; ops/sec = loops / total s.
			v := math.Round(*c*1e6) / float64(opt.PipeLoops)
			sus, sops = ptr(v), ptr(math.Trunc(float64(opt.PipeLoops)/(*c)))
		}
	}
	br.Metrics = []Metric{
		metric("usecs/op", "µs", "lower", us, sus),
		metric("ops/sec", "1/s", "higher", ops, sops),
	}
	return br
}

func runMessaging(ctx context.Context, spec *machine.Spec, opt Options) BenchResult {
	br := BenchResult{Bench: BenchMessaging}
	var total *float64
	real := &br.Real
	perf := tool(opt.PerfPath, "perf")
	switch {
	case opt.Builtin:
		real.Fallback = "--builtin"
	case perf == "":
		real.Fallback = "perf is not installed (not on PATH)"
	}
	if real.Fallback == "" {
		args := []string{"bench", "sched", "messaging", "-g", fmt.Sprint(opt.Groups), "-l", fmt.Sprint(opt.MsgLoops)}
		if opt.Threads {
			args = append(args, "-t")
		}
		fmt.Fprintf(opt.Progress, "twin: real: perf %s\n", strings.Join(args, " "))
		out, wall, err := runTool(ctx, opt.Timeout, perf, args...)
		*real = Real{Runner: "perf", Command: "perf " + strings.Join(args, " "), Mode: mode(opt.Threads), WallS: wall.Seconds(), Output: out}
		if err == nil {
			var p PerfMessaging
			if p, err = ParsePerfMessaging(out); err == nil {
				total = ptr(p.TotalS)
				if p.Mode != "" {
					real.Mode = p.Mode
				}
			}
		}
		if err != nil {
			real.Fallback = fmt.Sprintf("perf failed: %v", err)
		}
	}
	if total == nil && ctx.Err() == nil {
		why := real.Fallback
		fmt.Fprintf(opt.Progress, "twin: real: built-in messaging, %d groups × 20 senders × 20 receivers on OS threads, %d loops (%s)\n", opt.Groups, opt.MsgLoops, why)
		wall, err := BuiltinMessaging(ctx, opt.Groups, opt.MsgLoops, opt.Timeout)
		*real = Real{Runner: "builtin", Fallback: why, Mode: "threads", WallS: wall.Seconds(),
			Command: fmt.Sprintf("built-in messaging: %d groups of 20 sender and 20 receiver OS threads over AF_UNIX socketpairs, each sender writing %d × 20 messages of 100 bytes (like perf bench sched messaging -t -g %d -l %d)", opt.Groups, opt.MsgLoops, opt.Groups, opt.MsgLoops)}
		if err != nil {
			real.Error = err.Error()
		} else {
			total = ptr(wall.Seconds())
		}
	}
	// perf messaging: 20 fds, 100-byte messages, socketpairs; as hackbench's defaults.
	wl := fmt.Sprintf("hackbench:g=%d,l=%d,f=20,s=100", opt.Groups, opt.MsgLoops)
	if real.Mode == "threads" {
		wl += ",T=1"
	}
	var stotal *float64
	if res := simulate(ctx, spec, wl, scenario.MaxDuration, opt, &br.Sim); res != nil {
		if c := res.Workloads[0].CompletionS; c == nil {
			br.Sim.Error = fmt.Sprintf("the simulated messaging did not finish within %.3g s simulated", res.DurationS)
		} else {
			stotal = ptr(*c)
		}
	}
	br.Metrics = []Metric{metric("total time", "s", "lower", total, stotal)}
	return br
}

func runSchbench(ctx context.Context, spec *machine.Spec, opt Options) BenchResult {
	br := BenchResult{Bench: BenchSchbench}
	sb := tool(opt.SchbenchPath, "schbench")
	if sb == "" {
		br.Skipped = "schbench is not installed (not on PATH); there is no built-in equivalent"
		fmt.Fprintf(opt.Progress, "twin: schbench: skipped: %s\n", br.Skipped)
		return br
	}
	secs := max(int(math.Round(opt.SchbenchRuntime.Seconds())), 1)
	args := []string{"-m", fmt.Sprint(opt.SchbenchM), "-t", fmt.Sprint(opt.SchbenchT), "-r", fmt.Sprint(secs)}
	fmt.Fprintf(opt.Progress, "twin: real: schbench %s\n", strings.Join(args, " "))
	out, wall, err := runTool(ctx, opt.Timeout+time.Duration(secs)*time.Second, sb, args...)
	br.Real = Real{Runner: "schbench", Command: "schbench " + strings.Join(args, " "), Mode: "threads", WallS: wall.Seconds(), Output: out}
	var p50, p99 *float64
	if err == nil {
		var s Schbench
		if s, err = ParseSchbench(out); err == nil {
			p50, p99 = ptr(s.P50), ptr(s.P99)
			if s.Layout == "2023" {
				br.Real.Command += " (a 2023+ schbench: its workers' loop differs from the simulated 2016-2020 generation's)"
			}
		}
	}
	if err != nil {
		br.Real.Error = err.Error()
	}
	wl := fmt.Sprintf("schbench:m=%d,t=%d", opt.SchbenchM, opt.SchbenchT)
	var s50, s99 *float64
	if res := simulate(ctx, spec, wl, int64(secs)*engine.Second, opt, &br.Sim); res != nil {
		l := res.Workloads[0].WakeupLatencyUS
		if l.Count > 0 {
			s50, s99 = ptr(float64(l.P50)), ptr(float64(l.P99))
		} else {
			br.Sim.Error = "the simulated schbench recorded no wakeups"
		}
	}
	br.Metrics = []Metric{
		metric("wakeup p50", "µs", "lower", p50, s50),
		metric("wakeup p99", "µs", "lower", p99, s99),
	}
	return br
}

// simulate runs one workload on spec for at most dur simulated (a
// finite workload ends it earlier) and opt.Timeout of wall time, filling
// out; nil when it failed (out.Error says why).
func simulate(ctx context.Context, spec *machine.Spec, wl string, dur int64, opt Options, out *Sim) *scenario.Result {
	*out = Sim{Workload: wl, Seed: opt.Seed}
	fmt.Fprintf(opt.Progress, "twin: simulated: %s on %s\n", wl, spec.Name)
	cfg := scenario.Config{Preset: spec.Name, Machine: spec, Workloads: []string{wl}, Seed: opt.Seed, Duration: dur}
	sctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	start := time.Now()
	res, err := scenario.RunContext(sctx, cfg)
	out.WallS = time.Since(start).Seconds()
	if res != nil {
		out.DurationS = res.DurationS
		out.IPIsSent = res.Hardware.IPIsSent
		out.CPUBusyPct = res.CPUBusyPct
	}
	switch {
	case errors.Is(err, scenario.ErrInterrupted) && ctx.Err() == nil:
		out.Error = fmt.Sprintf("the simulation took longer than %v of wall time (stopped at %.3g s simulated)", opt.Timeout, out.DurationS)
		return nil
	case err != nil:
		out.Error = err.Error()
		return nil
	case len(res.Workloads) == 0:
		out.Error = "the simulation reported no workload"
		return nil
	}
	return res
}
