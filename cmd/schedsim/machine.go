package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"schedplay/detect"
	"schedplay/presets"
)

// The machine verb: `schedsim machine detect` describes this machine (or a
// sysfs tree) as a machine preset.

func init() {
	verbNames = append(verbNames, "machine")
	verbSynopsis["machine"] = "usage: schedsim machine detect [-o FILE] [--force] [--quick] [--sysfs DIR] [--name NAME]\n\n" +
		"Reads this machine's topology from sysfs (packages, dies, cores, SMT siblings, the LLC\n" +
		"from cache/index*/shared_cpu_list, NUMA nodes and distances, cpuidle states and governor)\n" +
		"and measures its costs with short microbenchmarks on pinned threads (about 10-20 s;\n" +
		"--quick skips them and keeps the knob defaults, noted as assumed). Prints a machine\n" +
		"preset as JSON, or writes it to -o FILE (whole or not at all; an existing file only with\n" +
		"--force). What sysfs lacks and what was assumed instead goes to stderr and into the\n" +
		"preset's notes. Run it with: schedsim run --machine-file FILE (or --preset FILE.json).\n"
}

type machineDetectFlags struct {
	out, sysfs, name string
	force, quick     bool
	budget           time.Duration
}

func machineDetectFlagSet(f *machineDetectFlags) *flag.FlagSet {
	fs := newFlagSet("machine")
	fs.StringVar(&f.out, "o", "", "write the preset to `FILE` instead of stdout (same as --out)")
	fs.StringVar(&f.out, "out", "", "write the preset to `FILE` instead of stdout")
	fs.BoolVar(&f.force, "force", false, "replace an existing -o file")
	fs.BoolVar(&f.quick, "quick", false, "read the topology only; measure nothing (costs stay the knob defaults, noted as assumed)")
	fs.StringVar(&f.sysfs, "sysfs", "", "read `DIR`, a tree laid out like / (sys/…, proc/…) or like /sys, or a .txtar archive of one,\ninstead of this machine; measurements are skipped")
	fs.StringVar(&f.name, "name", "", "preset `NAME` (default: the -o file's base name, else \"my-machine\")")
	fs.DurationVar(&f.budget, "budget", 1200*time.Millisecond, "wall time (`DURATION`) each measurement may take, 50ms..5s")
	return fs
}

func cmdMachine(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("machine: give a sub-verb: detect (see \"schedsim machine -h\")")
	}
	switch args[0] {
	case "detect":
		return cmdMachineDetect(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		var f machineDetectFlags
		printHelp(stdout, machineDetectFlagSet(&f))
		return errHelp
	}
	return usagef("machine: unknown sub-verb %q (valid: detect)", args[0])
}

func cmdMachineDetect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f machineDetectFlags
	if err := parseFlags(machineDetectFlagSet(&f), args, stdout, false); err != nil {
		return err
	}
	if f.budget < 50*time.Millisecond || f.budget > 5*time.Second {
		return usagef("machine detect: --budget %v out of range (allowed: 50ms..5s)", f.budget)
	}
	name := f.name
	if name == "" {
		name = "my-machine"
		if f.out != "" {
			name = presetName(strings.TrimSuffix(filepath.Base(f.out), ".json"))
		}
	}
	out := &output{flag: "-o", path: f.out}
	if err := openOutputs(f.force, nil, out); err != nil {
		return err
	}
	defer out.abort()

	fsys, err := detect.Open(f.sysfs)
	if err != nil {
		return usagef("machine detect: --sysfs %s: %v", f.sysfs, err)
	}
	r, err := detect.Detect(fsys, detect.Options{Name: name})
	if err != nil {
		return fmt.Errorf("machine detect: %v", err)
	}
	fd := r.Found
	fmt.Fprintf(stderr, "detect: %d CPUs: %d socket(s) × %d cores × %d thread(s), LLC of %d cores, numbering %s; idle: %s\n",
		len(fd.CPUs), r.Spec.Topology.Sockets, r.Spec.Topology.CoresPerSocket, fd.ThreadsPerCore, fd.CoresPerLLC, fd.Numbering, idleSummary(r))
	for _, fb := range r.Fallbacks {
		fmt.Fprintf(stderr, "detect: missing: %s\n", fb)
	}
	switch {
	case f.quick:
		fmt.Fprintln(stderr, "detect: --quick: costs not measured (knob defaults, noted as assumed)")
	case f.sysfs != "":
		fmt.Fprintln(stderr, "detect: --sysfs: costs not measured (they would be this machine's, not the tree's)")
	default:
		m, err := detect.Measure(ctx, r, detect.MeasureOptions{Budget: f.budget, Progress: stderr})
		if err != nil {
			if ctx.Err() != nil {
				return &interruptedError{"interrupted while measuring; no output written"}
			}
			return fmt.Errorf("machine detect: %v (use --quick to skip the measurements)", err)
		}
		detect.Apply(r.Spec, m)
		for _, s := range m.Skipped {
			fmt.Fprintf(stderr, "detect: not measured: %s\n", s)
		}
		fmt.Fprintf(stderr, "detect: measured in %.1f s\n", m.Elapsed.Seconds())
	}
	data, err := r.JSON()
	if err != nil {
		return err
	}
	// What it writes must load: the same check --machine-file makes.
	if _, err := presets.ParseMachine(data, name+".json"); err != nil {
		return fmt.Errorf("machine detect: internal error: the preset built does not load: %v", err)
	}
	if f.out == "" {
		_, err = stdout.Write(data)
		return err
	}
	if _, err := out.Write(data); err != nil {
		return fmt.Errorf("-o %s: %v", f.out, err)
	}
	if err := out.commit(f.force); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "detect: wrote %s; run it with: schedsim run --machine-file %s --workload pipe:l=20000\n", f.out, f.out)
	return nil
}

func idleSummary(r *detect.Result) string {
	fd := r.Found
	if r.Spec.IdleDriver == "none" {
		return "no cpuidle driver"
	}
	return fmt.Sprintf("%s, governor %s, %s", fd.IdleDriver, fd.Governor, strings.Join(fd.IdleStates, ", "))
}

// presetName turns a file name into a valid preset name.
func presetName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "my-machine"
	}
	return name
}
