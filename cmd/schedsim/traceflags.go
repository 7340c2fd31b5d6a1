package main

import (
	"math"
	"slices"
	"strings"
	"time"

	"schedplay/engine/cpumask"
	"schedplay/engine/field"
	"schedplay/presets"
	"schedplay/trace"
)

// traceOptions reads --trace-format, --trace-window, --trace-cpus and
// --trace-max into f.tformat and f.topt.
func (f *runFlags) traceOptions() error {
	if f.trace == "" {
		for _, fl := range []struct{ name, v string }{{"--trace-format", f.traceFormat}, {"--trace-window", f.traceWindow}, {"--trace-cpus", f.traceCPUs}} {
			if fl.v != "" {
				return usagef("%s needs --trace FILE", fl.name)
			}
		}
		return nil
	}
	if f.traceFormat != "" {
		f.tformat = trace.Format(f.traceFormat)
		if !slices.Contains(trace.Formats, f.tformat) {
			return usagef("--trace-format %q not allowed (allowed: json, json.gz, ftrace)", f.traceFormat)
		}
	} else {
		ff, ok := trace.FormatOf(f.trace)
		if !ok {
			return usagef("--trace %s: cannot tell the format from the name (end it in .json, .json.gz or .ftrace.txt, or give --trace-format)", f.trace)
		}
		f.tformat = ff
	}
	max, err := parseSize(f.traceMax)
	if err != nil {
		return usagef("--trace-max %q: %v", f.traceMax, err)
	}
	f.topt.MaxBytes = max
	if w := strings.TrimSpace(f.traceWindow); w != "" {
		a, b, ok := strings.Cut(w, "..")
		if !ok {
			return usagef("--trace-window %q: want START..END, e.g. 1s..1.1s, or START.. for the rest of the run", w)
		}
		start, err := time.ParseDuration(strings.TrimSpace(a))
		if err != nil {
			return usagef("--trace-window %q: start %q is not a duration like 500ms", w, a)
		}
		f.topt.Start = int64(start)
		if strings.TrimSpace(b) != "" {
			end, err := time.ParseDuration(strings.TrimSpace(b))
			if err != nil || end <= start {
				return usagef("--trace-window %q: end %q must be a duration after the start", w, b)
			}
			f.topt.End = int64(end)
		}
	}
	if f.traceCPUs != "" {
		spec, err := f.machineSpecForTrace()
		if err != nil {
			return err
		}
		m, err := cpumask.Parse(f.traceCPUs, spec)
		if err != nil {
			return usagef("--trace-cpus %q: %v", f.traceCPUs, err)
		}
		f.topt.CPUs = m
	}
	return nil
}

// machineSpecForTrace is the number of CPUs of the machine named by
// --preset (a --machine-file's is checked when the run is built; a CPU
// list beyond it is refused there by cpumask.Parse with the file's size).
func (f *runFlags) machineSpecForTrace() (int, error) { // the CPU count
	if f.machineFile != "" || strings.HasSuffix(f.preset, ".json") {
		return 1 << 16, nil
	}
	spec, err := presets.Machine(f.preset)
	if err != nil {
		return 0, usagef("--preset: %v", err)
	}
	n := 1
	for _, x := range []int{spec.Topology.Sockets, spec.Topology.CoresPerSocket, spec.Topology.ThreadsPerCore} {
		n *= max(x, 1)
	}
	return n, nil
}

// parseSize reads "256MB", "1.5GB", "4096" (bytes), KB/MB/GB being 1024-
// based, with the one value parser.
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range []struct {
		suf string
		m   float64
	}{{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suf)), u.m
			break
		}
	}
	v, err := field.Float("size", t, 1, math.MaxFloat64)
	if err != nil {
		return 0, err
	}
	n := v * mult
	if n < 64<<10 {
		return 0, errString("at least 64KB")
	}
	return int64(math.Min(n, math.MaxInt64/2)), nil
}

type errString string

func (e errString) Error() string { return string(e) }
