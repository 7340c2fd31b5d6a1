package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"schedplay/engine/workload"
	"schedplay/traceimport"
)

func init() {
	verbSynopsis["import"] = "usage: schedsim import TRACE [-o FILE] [--format auto|ftrace|perf|chrome] [--keep-kthreads] [--force] [--spec]\n\n" +
		"Reads a scheduler trace — ftrace text (trace, trace_pipe, trace-cmd report), perf sched\n" +
		"script output, or this simulator's own --trace exports (.ftrace.txt, .json, .json.gz) —\n" +
		"and writes a workload that replays it: each task's run bursts and sleeps and who wakes\n" +
		"whom (run it with --workload trace:file=FILE). TRACE - reads stdin. The JSON goes to\n" +
		"-o FILE (written whole or not at all; an existing file only with --force) or stdout;\n" +
		"the summary of what was kept and what was not goes to stderr.\n"
}

type importFlags struct {
	out          string
	format       string
	keepKthreads bool
	force        bool
	spec         bool
}

func importFlagSet(f *importFlags) *flag.FlagSet {
	fs := newFlagSet("import")
	fs.StringVar(&f.out, "o", "", "write the workload JSON to `FILE` (default stdout)")
	fs.StringVar(&f.out, "out", "", "the same as -o `FILE`")
	fs.StringVar(&f.format, "format", "auto", "input `FORMAT`: auto, ftrace (trace, trace_pipe, trace-cmd report, .ftrace.txt), perf (perf sched script), chrome (this simulator's .json/.json.gz, or a JSON trace whose systemTraceEvents holds ftrace text: Perfetto's traceconv json)")
	fs.BoolVar(&f.keepKthreads, "keep-kthreads", false, "keep kernel threads (kworker/*, ksoftirqd/*, migration/*, rcu_*, ...) as tasks")
	fs.BoolVar(&f.force, "force", false, "replace an existing -o file")
	fs.BoolVar(&f.spec, "spec", false, "write the workload spec trace:b64=... (for the page's workload field or a share link) instead of the JSON")
	return fs
}

func cmdImport(args []string, stdout, stderr io.Writer) error {
	var f importFlags
	fs := importFlagSet(&f)
	// Flags may come before and after TRACE (parseFlags).
	if err := parseFlags(fs, args, stdout, true); err != nil {
		return err
	}
	pos := fs.Args()
	if len(pos) != 1 {
		if len(pos) == 0 {
			return usagef("import: no TRACE given (usage: schedsim import TRACE [-o FILE]; see \"schedsim import -h\")")
		}
		return usagef("import: one TRACE only, got %d (%s)", len(pos), strings.Join(pos, " "))
	}
	format := traceimport.Format(f.format)
	ok := false
	for _, x := range traceimport.Formats {
		ok = ok || x == format
	}
	if !ok {
		return usagef("--format %q not allowed (allowed: auto, ftrace, perf, chrome)", f.format)
	}
	path := pos[0]
	// The trace is read as a stream (the import holds its events, not
	// its text); its size limit applies as it is read.
	in := io.Reader(os.Stdin)
	if path != "-" {
		fh, err := os.Open(path)
		if err != nil {
			return usagef("import %s: %v", path, cause(err))
		}
		defer fh.Close()
		if fi, err := fh.Stat(); err == nil && fi.IsDir() {
			return usagef("import %s: is a directory", path)
		}
		in = fh
	}
	out := &output{flag: "-o", path: f.out}
	var inputs []input
	if path != "-" {
		inputs = append(inputs, input{flag: "TRACE", path: path})
	}
	// Check the output before the work, so a refusal costs nothing.
	if err := openOutputs(f.force, inputs, out); err != nil {
		return err
	}
	defer out.abort()
	file, sum, err := traceimport.ImportReader(in, traceimport.Options{Format: format, KeepKthreads: f.keepKthreads, Source: path})
	if err != nil {
		return usagef("import %s: %v", path, err)
	}
	js, err := traceimport.Marshal(file)
	if err != nil {
		return err
	}
	sum.Report(stderr)
	if f.spec {
		js = []byte(workload.TraceSpec(js) + "\n")
	}
	if f.out == "" {
		_, err = stdout.Write(js)
		return err
	}
	if _, err := out.Write(js); err != nil {
		return err
	}
	if err := out.commit(f.force); err != nil {
		return err
	}
	if f.spec {
		fmt.Fprintf(stderr, "wrote %s (%d bytes): the spec trace:b64=...\n", f.out, len(js))
	} else {
		fmt.Fprintf(stderr, "wrote %s (%d bytes); replay it with --workload trace:file=%s\n", f.out, len(js), f.out)
	}
	return nil
}

// traceFileKind is how run's --workload trace:file=PATH reads PATH: its
// size limit, and its check returning the spec that carries it.
func traceFileKind() (int64, func([]byte) (string, error)) {
	return workload.TraceMaxBytes, func(d []byte) (string, error) {
		if _, err := workload.ParseTraceFile(d); err != nil {
			return "", err
		}
		return workload.TraceSpec(d), nil
	}
}
