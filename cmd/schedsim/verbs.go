package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	json "github.com/goccy/go-json"

	"schedplay/engine/knob"
	"schedplay/engine/workload"
	"schedplay/presets"
	"schedplay/scenario"
)

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

func cmdPresets(args []string, w io.Writer) error {
	if err := parseFlags(newFlagSet("presets", io.Discard), args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range presets.List() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Kind, p.Title)
	}
	return tw.Flush()
}

func cmdKnobs(args []string, w io.Writer) error {
	fs := newFlagSet("knobs", io.Discard)
	format := fs.String("format", "text", "text or markdown (the README's knob table)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch *format {
	case "markdown":
		fmt.Fprint(w, knobMarkdown())
		return nil
	case "text":
	default:
		return usagef("--format %q not allowed (allowed: text, markdown)", *format)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tGROUP\tDEFAULT\tRANGE\tDOC")
	for _, d := range knob.Table() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Kind, d.Group, d.Format(d.Default), d.Allowed(), d.Doc)
	}
	return tw.Flush()
}

// knobMarkdown renders the knob table for the README.
func knobMarkdown() string {
	var b strings.Builder
	b.WriteString("| knob | type | group | default | range | what it does |\n|---|---|---|---|---|---|\n")
	for _, d := range knob.Table() {
		esc := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", d.Name, d.Kind, d.Group, esc(d.Format(d.Default)), esc(d.Allowed()), esc(d.Doc))
	}
	return b.String()
}

func cmdWorkloads(args []string, w io.Writer) error {
	if err := parseFlags(newFlagSet("workloads", io.Discard), args); err != nil {
		return err
	}
	for _, name := range workload.Kinds() {
		k, _ := workload.Lookup(name)
		fmt.Fprintf(w, "%s — %s\n", name, k.Doc)
		for _, key := range k.AllKeys() {
			def := key.Default
			if def == "" {
				def = "(none)"
			}
			fmt.Fprintf(w, "  %-13s default %-8s %s\n", key.Name, def, key.Doc)
		}
	}
	return nil
}

type runFlags struct {
	preset      string
	machineFile string
	workloads   multiFlag
	sets        multiFlag
	duration    time.Duration
	seed        uint64
	runs        int
	format      string
	noWall      bool
	debug       bool
	trace       string
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlagSet("run", stderr)
	fs.StringVar(&f.preset, "preset", "", "machine preset name (see `schedsim presets`)")
	fs.StringVar(&f.machineFile, "machine-file", "", "JSON file describing your own machine (the preset schema); --preset may also name a file path ending in .json")
	fs.Var(&f.workloads, "workload", "workload spec kind:key=value,... (repeatable; see `schedsim workloads`)")
	fs.Var(&f.sets, "set", "knob setting KNOB=VALUE (repeatable; see `schedsim knobs`)")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "simulated time to run")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (with --runs N, seeds seed..seed+N-1)")
	fs.IntVar(&f.runs, "runs", 1, "number of runs with consecutive seeds; numbers become mean/stdev")
	fs.StringVar(&f.format, "format", "text", "output format: text, json or schbench")
	fs.BoolVar(&f.noWall, "no-wall-time", false, "report sim_wall_s as 0 so identical runs give byte-identical output")
	fs.BoolVar(&f.debug, "debug", false, "check engine invariants after every event (slow)")
	fs.StringVar(&f.trace, "trace", "", "write a Chrome/Perfetto JSON trace of the run to FILE (single run only)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	switch f.format {
	case "text", "json", "schbench":
	default:
		return usagef("--format %q not allowed (allowed: text, json, schbench)", f.format)
	}
	if f.runs > 1 {
		if f.trace != "" {
			return usagef("--trace needs a single run (got --runs %d)", f.runs)
		}
		results, err := scenario.RunMany(cfg, f.runs)
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
			out, err := scenario.Aggregate(results)
			if err != nil {
				return err
			}
			_, err = stdout.Write(out)
			return err
		case "schbench":
			for _, r := range results {
				writeSchbench(stdout, r)
			}
			return nil
		}
		writeTextMulti(stdout, cfg, results)
		return nil
	}
	var res *scenario.Result
	if f.trace != "" {
		res, err = runWithTrace(cfg, f.trace)
	} else {
		res, err = scenario.Run(cfg)
	}
	if err != nil {
		return err
	}
	if f.noWall {
		res.SimWallS = 0
	}
	switch f.format {
	case "json":
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	case "schbench":
		writeSchbench(stdout, res)
		return nil
	}
	writeText(stdout, cfg, res)
	return nil
}

func (f *runFlags) config() (scenario.Config, error) {
	wl, err := expandRTAppFiles(f.workloads)
	if err != nil {
		return scenario.Config{}, err
	}
	cfg := scenario.Config{Preset: f.preset, Workloads: wl, Knobs: f.sets,
		Seed: f.seed, Duration: int64(f.duration), Debug: f.debug}
	file := f.machineFile
	if file == "" && strings.HasSuffix(f.preset, ".json") {
		file = f.preset
	}
	if file != "" {
		data, err := readLimited(file, 1<<20)
		if err != nil {
			return cfg, usagef("machine file: %v", err)
		}
		spec, err := presets.ParseMachine(data, file)
		if err != nil {
			return cfg, usagef("%v", err)
		}
		cfg.Machine = spec
		if cfg.Preset == "" || cfg.Preset == file {
			cfg.Preset = spec.Name
		}
	} else {
		if f.preset == "" {
			return cfg, usagef("--preset is required (valid presets: %s)", strings.Join(machineNames(), ", "))
		}
		if _, err := presets.Machine(f.preset); err != nil {
			return cfg, usagef("%v", err)
		}
	}
	if f.runs < 1 || f.runs > scenario.MaxRuns {
		return cfg, usagef("--runs %d out of range (allowed: 1..%d)", f.runs, scenario.MaxRuns)
	}
	if _, _, err := cfg.Check(); err != nil {
		return cfg, usagef("%v", err)
	}
	return cfg, nil
}

// expandRTAppFiles turns "rtapp:file=PATH" into the self-contained
// "rtapp:b64=..." spec (the engine reads no files; a spec must also work in
// a share link).
func expandRTAppFiles(specs []string) ([]string, error) {
	out := make([]string, len(specs))
	for i, sp := range specs {
		out[i] = sp
		rest, ok := strings.CutPrefix(strings.TrimSpace(sp), "rtapp:file=")
		if !ok {
			continue
		}
		if strings.Contains(rest, ",") {
			return nil, usagef("workload %q: rtapp:file= takes only the file path (put nice/cpus in the JSON)", sp)
		}
		data, err := readLimited(rest, 1<<20)
		if err != nil {
			return nil, usagef("workload %q: %v", sp, err)
		}
		out[i] = workload.RTAppSpec(data)
	}
	return out, nil
}

func machineNames() []string {
	var out []string
	for _, m := range presets.Machines() {
		out = append(out, m.Name)
	}
	return out
}

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
