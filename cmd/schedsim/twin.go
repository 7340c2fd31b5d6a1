package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"schedplay/engine/machine"
	"schedplay/presets"
	"schedplay/twin"
)

// The twin verb: `schedsim twin` runs the real scheduler benchmarks on this
// machine and the simulated ones on its preset, and prints both with the
// ratio simulated/real.

func init() {
	verbNames = append(verbNames, "twin")
	verbSynopsis["twin"] = "usage: schedsim twin [--machine-file FILE | --quick] [--bench pipe,messaging,schbench]\n" +
		"                    [--loops N] [--groups G] [--msg-loops L] [--threads] [--builtin]\n" +
		"                    [--format text|json] [--out FILE] [--force]\n\n" +
		"Checks the simulator against this machine: runs the real benchmark (perf bench sched\n" +
		"pipe -l N and perf bench sched messaging -g G -l L, schbench -m M -t T -r S when it is on\n" +
		"PATH; without perf, a built-in equivalent on real OS threads making the same read/write\n" +
		"syscalls), then the simulated one with the same parameters on this machine's preset\n" +
		"(detected as `schedsim machine detect` does, costs measured in about 10 s; --quick keeps\n" +
		"the knob defaults; --machine-file uses a preset you give), and prints both side by side\n" +
		"with the ratio sim/real. The real figures are noisy on a loaded machine (said when the\n" +
		"load average exceeds half the CPUs). Exit status 1 only when no benchmark gave both\n" +
		"figures; a large ratio is a finding, not a failure.\n"
}

type twinFlags struct {
	machineFile string
	quick       bool
	budget      time.Duration
	benches     string
	loops       int64
	groups      int
	msgLoops    int
	schbenchM   int
	schbenchT   int
	schbenchR   time.Duration
	threads     bool
	builtin     bool
	timeout     time.Duration
	seed        uint64
	format      string
	out         string
	force       bool
}

func twinFlagSet(f *twinFlags) *flag.FlagSet {
	fs := newFlagSet("twin")
	fs.StringVar(&f.machineFile, "machine-file", "", "simulate on the preset in `FILE` (e.g. from schedsim machine detect -o FILE) instead of detecting this machine")
	fs.BoolVar(&f.quick, "quick", false, "detect the topology only; measure no costs (the preset keeps the knob defaults)")
	fs.DurationVar(&f.budget, "budget", 600*time.Millisecond, "wall time (`DURATION`) each cost measurement may take, 50ms..5s")
	fs.StringVar(&f.benches, "bench", strings.Join(twin.Benches, ","), "benchmarks to run, a comma-separated `LIST` of pipe, messaging, schbench\n(schbench is skipped when it is not installed)")
	fs.Int64Var(&f.loops, "loops", 20000, "pipe round trips (`N`, perf bench sched pipe -l)")
	fs.IntVar(&f.groups, "groups", 2, "messaging groups (`G`, perf bench sched messaging -g), each 20 senders × 20 receivers")
	fs.IntVar(&f.msgLoops, "msg-loops", 200, "messaging loops (`L`, perf bench sched messaging -l)")
	fs.IntVar(&f.schbenchM, "schbench-m", 1, "schbench message threads (`M`, -m)")
	fs.IntVar(&f.schbenchT, "schbench-t", 0, "schbench workers per message thread (`T`, -t; default: the CPU count)")
	fs.DurationVar(&f.schbenchR, "schbench-runtime", 5*time.Second, "schbench run time (`DURATION`, -r, whole seconds), real and simulated")
	fs.BoolVar(&f.threads, "threads", false, "thread mode (perf bench sched pipe -T, messaging -t) instead of processes")
	fs.BoolVar(&f.builtin, "builtin", false, "run the built-in equivalents (OS threads) even when perf is installed")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "wall time (`DURATION`) each real and each simulated run may take")
	fs.Uint64Var(&f.seed, "seed", 1, "the simulated runs' `SEED`")
	fs.StringVar(&f.format, "format", "text", "output `FORMAT`: text or json")
	fs.StringVar(&f.out, "out", "", "write the report to `FILE` instead of stdout (whole or not at all)")
	fs.BoolVar(&f.force, "force", false, "replace an existing --out file")
	return fs
}

func cmdTwin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f twinFlags
	if err := parseFlags(twinFlagSet(&f), args, stdout, false); err != nil {
		return err
	}
	if f.format != "text" && f.format != "json" {
		return usagef("twin: --format %q not allowed (allowed: text, json)", f.format)
	}
	if f.machineFile != "" && f.quick {
		return usagef("twin: --machine-file and --quick exclude each other (--quick detects this machine without measuring; --machine-file detects nothing)")
	}
	if f.budget < 50*time.Millisecond || f.budget > 5*time.Second {
		return usagef("twin: --budget %v out of range (allowed: 50ms..5s)", f.budget)
	}
	var benches []string
	for _, b := range strings.Split(f.benches, ",") {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		if !slices.Contains(twin.Benches, b) {
			return usagef("twin: --bench %q: unknown benchmark %q (known: %s)", f.benches, b, strings.Join(twin.Benches, ", "))
		}
		if !slices.Contains(benches, b) {
			benches = append(benches, b)
		}
	}
	if len(benches) == 0 {
		return usagef("twin: --bench %q names no benchmark (known: %s)", f.benches, strings.Join(twin.Benches, ", "))
	}
	for _, c := range []struct {
		flag   string
		v, max int64
	}{
		{"--loops", f.loops, 100_000_000},
		{"--groups", int64(f.groups), 64},
		{"--msg-loops", int64(f.msgLoops), 1_000_000},
		{"--schbench-m", int64(f.schbenchM), 1024},
		{"--schbench-t", int64(f.schbenchT), 4096},
	} {
		lo := int64(1)
		if c.flag == "--schbench-t" {
			lo = 0
		}
		if c.v < lo || c.v > c.max {
			return usagef("twin: %s %d out of range (allowed: %d..%d)", c.flag, c.v, lo, c.max)
		}
	}
	if f.schbenchR < time.Second || f.schbenchR > time.Hour {
		return usagef("twin: --schbench-runtime %v out of range (allowed: 1s..1h)", f.schbenchR)
	}
	if f.timeout < 100*time.Millisecond || f.timeout > time.Hour {
		return usagef("twin: --timeout %v out of range (allowed: 100ms..1h)", f.timeout)
	}

	var inputs []input
	if f.machineFile != "" {
		inputs = append(inputs, input{flag: "--machine-file", path: f.machineFile})
	}
	out := &output{flag: "--out", path: f.out}
	if err := openOutputs(f.force, inputs, out); err != nil {
		return err
	}
	defer out.abort()

	var (
		spec   *machine.Spec
		preset twin.Preset
		host   twin.Host
	)
	if f.machineFile != "" {
		data, err := readLimited(f.machineFile, presets.MaxInputBytes)
		if err != nil {
			return usagef("twin: --machine-file %s: %v", f.machineFile, cause(err))
		}
		spec, err = presets.ParseMachine(data, f.machineFile)
		if err != nil {
			return usagef("twin: --machine-file: %v", err)
		}
		preset = twin.Preset{Name: spec.Name, Source: "file", File: f.machineFile}
		host, _ = twin.HostInfo()
	} else {
		var err error
		spec, preset, host, err = twin.DetectPreset(ctx, twin.DetectOptions{Quick: f.quick, Budget: f.budget, Progress: stderr})
		if err != nil {
			if ctx.Err() != nil {
				return &interruptedError{"twin: interrupted while measuring; no output written"}
			}
			return fmt.Errorf("twin: %v", err)
		}
	}
	rep, err := twin.Run(ctx, spec, preset, host, twin.Options{
		Benches: benches, PipeLoops: f.loops, Groups: f.groups, MsgLoops: f.msgLoops,
		SchbenchM: f.schbenchM, SchbenchT: f.schbenchT, SchbenchRuntime: f.schbenchR,
		Threads: f.threads, Builtin: f.builtin, Timeout: f.timeout, Seed: f.seed, Progress: stderr,
	})
	if err != nil {
		if ctx.Err() != nil {
			return &interruptedError{"twin: interrupted; no output written"}
		}
		return fmt.Errorf("twin: %v", err)
	}
	dst := newSink(stdout, out)
	if f.format == "json" {
		b, err := rep.JSON()
		if err != nil {
			return err
		}
		dst.Write(b)
	} else if err := rep.WriteText(dst); err != nil {
		return err
	}
	if err := dst.finish(f.force); err != nil {
		return err
	}
	if rep.Failed() {
		return errors.New("twin: no benchmark gave both a real and a simulated figure (see the report)")
	}
	return nil
}
